//! Kubernetes resource quantities ("2113470464Ki", "80Gi", "1.5e3", "500m"),
//! as the API server writes them.

/// The value of a quantity, or `None` when it does not parse.
pub fn parse(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    if number.is_empty() || number == "+" || number == "-" {
        return None;
    }
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    let v = n * scale;
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn every_suffix() {
        assert_eq!(parse("2113470464Ki"), Some(2113470464.0 * 1024.0));
        assert_eq!(parse("80Gi"), Some(80.0 * 1024f64.powi(3)));
        assert_eq!(parse("8"), Some(8.0));
        assert_eq!(parse("1.5e3"), Some(1500.0));
        assert_eq!(parse("500m"), Some(0.5));
        assert_eq!(parse("2M"), Some(2e6));
        for bad in ["", "Gi", "12Q", "1.2.3", "e3", "abc"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
