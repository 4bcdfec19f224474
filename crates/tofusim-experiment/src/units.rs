//! Sizes and rates with units: `"256B"`, `"1KiB"`, `"2MB"`, `"5GB/s"`,
//! `"175MB/s"`, `"1.4Gb/s"`. Decimal prefixes (k, M, G, T) are powers of
//! 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024; `b` is bits, `B` bytes.

/// Parses a size in bytes. A bare number means bytes.
pub fn parse_size(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, unit) = split_number(t)?;
    let prefix = if unit.is_empty() {
        Some("")
    } else {
        unit.strip_suffix('B')
    };
    match prefix.and_then(prefix_scale) {
        Some(scale) => Ok(num * scale),
        None => Err(format!(
            "a size such as \"256B\", \"1KiB\" or \"16MB\" (unknown unit {unit:?})"
        )),
    }
}

/// Parses a rate in bytes per second. A bare number means bytes per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, unit) = split_number(t)?;
    let Some(base) = unit.strip_suffix("/s") else {
        if unit.is_empty() {
            return Ok(num);
        }
        return Err(format!(
            "a rate such as \"5GB/s\", \"175MB/s\" or \"1.4Gb/s\" (unit {unit:?} has no /s)"
        ));
    };
    let (prefix, bits) = if let Some(p) = base.strip_suffix('B') {
        (p, false)
    } else if let Some(p) = base.strip_suffix('b') {
        (p, true)
    } else {
        return Err(format!("a rate in B/s or b/s (unknown unit {unit:?})"));
    };
    let scale = prefix_scale(prefix)
        .ok_or_else(|| format!("a rate such as \"5GB/s\" (unknown prefix {prefix:?})"))?;
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

fn split_number(t: &str) -> Result<(f64, &str), String> {
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    // An 'e' directly before a unit letter is not an exponent ("5e" is odd anyway).
    let (n, u) = t.split_at(end);
    let num: f64 = n
        .parse()
        .map_err(|_| format!("a number with an optional unit, found {t:?}"))?;
    if !num.is_finite() || num < 0.0 {
        return Err(format!("a non-negative number, found {t:?}"));
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
