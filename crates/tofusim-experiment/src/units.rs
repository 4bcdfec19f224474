//! Sizes and rates with units: `"256B"`, `"1KiB"`, `"2MB"`, `"5GB/s"`,
//! `"175MB/s"`, `"1.4Gb/s"`. Decimal prefixes (k, M, G, T) are powers of
//! 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024; `b` is bits, `B` bytes.

/// What a size or rate should have been (the message completes
/// "expected …").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("a number with an optional unit, found {0:?}")]
    NotANumber(String),
    #[error("a non-negative number, found {0:?}")]
    Negative(String),
    #[error("a size such as \"256B\", \"1KiB\" or \"16MB\" (unknown unit {0:?})")]
    SizeUnit(String),
    #[error("a rate such as \"5GB/s\", \"175MB/s\" or \"1.4Gb/s\" (unit {0:?} has no /s)")]
    RateNotPerSecond(String),
    #[error("a rate in B/s or b/s (unknown unit {0:?})")]
    RateUnit(String),
    #[error("a rate such as \"5GB/s\" (unknown prefix {0:?})")]
    RatePrefix(String),
}

/// Parses a size in bytes. A bare number means bytes.
pub fn parse_size(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let (num, unit) = split_number(t)?;
    let prefix = if unit.is_empty() {
        Some("")
    } else {
        unit.strip_suffix('B')
    };
    match prefix.and_then(prefix_scale) {
        Some(scale) => Ok(num * scale),
        None => Err(UnitError::SizeUnit(unit.to_string())),
    }
}

/// Parses a rate in bytes per second. A bare number means bytes per second.
pub fn parse_rate(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let (num, unit) = split_number(t)?;
    let Some(base) = unit.strip_suffix("/s") else {
        if unit.is_empty() {
            return Ok(num);
        }
        return Err(UnitError::RateNotPerSecond(unit.to_string()));
    };
    let (prefix, bits) = if let Some(p) = base.strip_suffix('B') {
        (p, false)
    } else if let Some(p) = base.strip_suffix('b') {
        (p, true)
    } else {
        return Err(UnitError::RateUnit(unit.to_string()));
    };
    let scale = prefix_scale(prefix)
        .ok_or_else(|| UnitError::RatePrefix(prefix.to_string()))?;
    Ok(num * scale / if bits { 8.0 } else { 1.0 })
}

/// Decimal (k, M, G, T) and binary (Ki, Mi, Gi, Ti) unit prefixes.
fn prefix_scale(prefix: &str) -> Option<f64> {
    Some(match prefix {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        _ => return None,
    })
}

fn split_number(t: &str) -> Result<(f64, &str), UnitError> {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    // An 'e' directly before a unit letter is not an exponent ("5e" is odd anyway).
    let (n, u) = t.split_at(end);
    let num: f64 = n
        .parse()
        .map_err(|_| UnitError::NotANumber(t.to_string()))?;
    if !num.is_finite() || num < 0.0 {
        return Err(UnitError::Negative(t.to_string()));
    }
    Ok((num, u.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256B").unwrap(), 256.0);
        assert_eq!(parse_size("1KiB").unwrap(), 1024.0);
        assert_eq!(parse_size("2 MB").unwrap(), 2e6);
        assert_eq!(parse_size("512").unwrap(), 512.0);
        assert!(parse_size("3 furlongs").is_err());
        assert!(parse_size("-4B").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5GB/s").unwrap(), 5e9);
        assert_eq!(parse_rate("175MB/s").unwrap(), 175e6);
        assert_eq!(parse_rate("1.4Gb/s").unwrap(), 175e6);
        assert_eq!(parse_rate("100").unwrap(), 100.0);
        assert!(parse_rate("5GB").is_err());
    }
}
