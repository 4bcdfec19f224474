"""Results turned into files: JSON, CSV and PNG plots."""
