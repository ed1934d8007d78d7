//! Slurm hostlist expressions: `gpu[01-16,20]`, `rack[1-2]-n[1-4]`, lists
//! of them joined by commas. Expanded the way Slurm does: a range keeps the
//! width of its first bound (`[08-10]` is 08 09 10, `[8-10]` is 8 9 10), and
//! several bracket groups in one name multiply out left to right.

/// The most names one expression may stand for, so a typo such as
/// `n[1-999999999]` is an error rather than an exhausted machine.
pub const MAX_NAMES: usize = 1 << 20;

/// Every name of a hostlist expression, in order; or why it is malformed.
pub fn expand(expr: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for term in split_top(expr)? {
        if term.is_empty() {
            return Err(format!("`{expr}` has an empty name between commas"));
        }
        let mut names = vec![String::new()];
        let mut rest = term;
        while !rest.is_empty() {
            match rest.find('[') {
                None => {
                    if rest.contains(']') {
                        return Err(format!("`{term}` has a `]` with no `[`"));
                    }
                    names.iter_mut().for_each(|n| n.push_str(rest));
                    rest = "";
                }
                Some(open) => {
                    let lit = &rest[..open];
                    if lit.contains(']') {
                        return Err(format!("`{term}` has a `]` with no `[`"));
                    }
                    let close = rest[open..]
                        .find(']')
                        .map(|c| open + c)
                        .ok_or_else(|| format!("`{term}` has an unclosed `[`"))?;
                    let suffixes = ranges(&rest[open + 1..close], term)?;
                    if names.len().saturating_mul(suffixes.len()) + out.len() > MAX_NAMES {
                        return Err(format!("`{expr}` stands for more than {MAX_NAMES} names"));
                    }
                    let mut next = Vec::with_capacity(names.len() * suffixes.len());
                    for n in &names {
                        for s in &suffixes {
                            next.push(format!("{n}{lit}{s}"));
                        }
                    }
                    names = next;
                    rest = &rest[close + 1..];
                }
            }
        }
        out.extend(names);
    }
    Ok(out)
}

/// The terms of a list: split at the commas outside brackets.
fn split_top(expr: &str) -> Result<Vec<&str>, String> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0u32, 0);
    for (i, c) in expr.char_indices() {
        match c {
            '[' if depth > 0 => return Err(format!("`{expr}` has a `[` inside brackets")),
            '[' => depth += 1,
            ']' if depth == 0 => return Err(format!("`{expr}` has a `]` with no `[`")),
            ']' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&expr[start..i]);
                start = i + 1;
            }
            c if c.is_whitespace() => return Err(format!("`{expr}` has a space in it")),
            _ => {}
        }
    }
    if depth > 0 {
        return Err(format!("`{expr}` has an unclosed `[`"));
    }
    terms.push(&expr[start..]);
    Ok(terms)
}

/// The strings inside one pair of brackets: `01-03,7` -> 01 02 03 7.
fn ranges(inner: &str, term: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in inner.split(',') {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        if !digits(lo) || !digits(hi) {
            return Err(format!("`{term}`: `{part}` is not a number or a range of numbers"));
        }
        let too_big = || format!("`{term}`: `{part}` is too large a number");
        let (a, b) = (lo.parse::<u64>().map_err(|_| too_big())?, hi.parse::<u64>().map_err(|_| too_big())?);
        if a > b {
            return Err(format!("`{term}`: the range `{part}` runs backwards"));
        }
        if b - a >= MAX_NAMES as u64 {
            return Err(format!("`{term}` stands for more than {MAX_NAMES} names"));
        }
        let width = lo.len();
        out.extend((a..=b).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn expands_as_slurm_does() {
        assert_eq!(expand("gpu[01-03,20]").unwrap(), ["gpu01", "gpu02", "gpu03", "gpu20"]);
        assert_eq!(expand("a,b[8-10]").unwrap(), ["a", "b8", "b9", "b10"]);
        assert_eq!(expand("n[08-10]").unwrap(), ["n08", "n09", "n10"]);
        assert_eq!(expand("r[1-2]n[1-2]").unwrap(), ["r1n1", "r1n2", "r2n1", "r2n2"]);
        assert_eq!(expand("x[1]-ib").unwrap(), ["x1-ib"]);
    }

    #[test]
    fn malformed_lists_say_why() {
        for bad in ["gpu[01-", "gpu01]", "gpu[3-1]", "gpu[a-b]", "a,,b", "gpu[1-2[3]]", "gpu[]", "a b", "n[1-99999999]"]
        {
            assert!(expand(bad).is_err(), "{bad}");
        }
    }

    /// One bracketed group of a generated expression, and the names it
    /// stands for, written out without any parsing.
    fn group() -> impl Strategy<Value = (String, Vec<String>)> {
        prop::collection::vec((0u64..200, 0u64..5, 1usize..4), 1..4).prop_map(|parts| {
            let mut text = Vec::new();
            let mut names = Vec::new();
            for (lo, len, width) in parts {
                let hi = lo + len;
                text.push(if len == 0 { format!("{lo:0width$}") } else { format!("{lo:0width$}-{hi}") });
                names.extend((lo..=hi).map(|n| format!("{n:0width$}")));
            }
            (format!("[{}]", text.join(",")), names)
        })
    }

    proptest! {
        #[test]
        fn matches_a_reference_expansion(
            terms in prop::collection::vec(("[a-z]{1,4}", prop::option::of(group()), "(-[a-z]{1,3})?"), 1..4)
        ) {
            let mut expr = Vec::new();
            let mut want = Vec::new();
            for (prefix, group, suffix) in terms {
                match group {
                    None => {
                        expr.push(format!("{prefix}{suffix}"));
                        want.push(format!("{prefix}{suffix}"));
                    }
                    Some((text, names)) => {
                        expr.push(format!("{prefix}{text}{suffix}"));
                        want.extend(names.iter().map(|n| format!("{prefix}{n}{suffix}")));
                    }
                }
            }
            prop_assert_eq!(expand(&expr.join(",")).unwrap(), want);
        }

        #[test]
        fn never_panics(s in "[a-z0-9\\[\\],\\- ]{0,24}") {
            let _ = expand(&s);
        }
    }
}
