//! What llmgw knows about the terminal it prints to: whether to colour,
//! how wide to wrap, and how to print text that came from input files so
//! that it cannot drive the terminal.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// `--color`: auto follows the terminal and the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Sets the `--color` choice, once, at start-up.
pub fn set_color(choice: ColorChoice) {
    CHOICE.store(choice as u8, Ordering::Relaxed);
}

/// Whether output to a stream gets colour: `--color always|never` decide;
/// under auto, a non-empty `NO_COLOR` says no, a `CLICOLOR_FORCE` other than
/// `0` says yes, `TERM=dumb` says no, else only a terminal gets colour.
pub fn colour(is_terminal: bool) -> bool {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match CHOICE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            if env("NO_COLOR").is_some() {
                return false;
            }
            if env("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
                return true;
            }
            if env("TERM").is_some_and(|t| t == "dumb") {
                return false;
            }
            is_terminal
        }
    }
}

/// Whether diagnostics on stderr get colour.
pub fn colour_for_stderr() -> bool {
    use std::io::IsTerminal;
    colour(std::io::stderr().is_terminal())
}

/// The width human output on stdout is fitted to: `COLUMNS` when set, else
/// the terminal's; `None` when stdout is no terminal (a file or a pipe gets
/// long lines whole, as a program reading them wants).
pub fn stdout_width() -> Option<usize> {
    use std::io::IsTerminal;
    if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()) {
        return (cols >= 20).then_some(cols);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)).filter(|&w| w >= 20)
}

/// Width for miette reports on stderr: the terminal's, else 100.
pub fn stderr_width() -> usize {
    use std::io::IsTerminal;
    if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok())
        && cols >= 20
    {
        return cols;
    }
    if std::io::stderr().is_terminal()
        && let Some((w, _)) = terminal_size::terminal_size_of(std::io::stderr())
    {
        return usize::from(w.0).max(20);
    }
    100
}

static OUTPUT_WIDTH: AtomicUsize = AtomicUsize::new(0);

/// Sets the width the document being written is fitted to (`None`: a file
/// or a pipe, written unwrapped).
pub fn set_output_width(width: Option<usize>) {
    OUTPUT_WIDTH.store(width.unwrap_or(0), Ordering::Relaxed);
}

pub fn output_width() -> Option<usize> {
    Some(OUTPUT_WIDTH.load(Ordering::Relaxed)).filter(|&w| w > 0)
}

/// Human output as it is printed: control characters from input files
/// escaped (llmgw's own text has none but line breaks), and lines other
/// than table rows wrapped to the output width, continued two spaces in.
pub fn human(text: &str) -> String {
    human_at(text, output_width())
}

fn human_at(text: &str, width: Option<usize>) -> String {
    let text = escape_except(text, &['\n']);
    let Some(width) = width else {
        return text.into_owned();
    };
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let table = body.starts_with(['┌', '│', '╞', '├', '└', '┆', '╭', '╰']);
        if table || body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let lead = body.len() - body.trim_start_matches(' ').len();
        out.push_str(&wrap(body, Some(width), &" ".repeat(lead + 2)));
        if line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Whether a character could move the cursor, recolour, retitle or reorder
/// what a terminal shows: C0 and C1 controls, DEL, and the bidirectional
/// overrides and isolates.
fn is_control(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escaped(c: char, out: &mut String) {
    use std::fmt::Write as _;
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// Text from an input file (an id, a label, a version), made safe to print:
/// every control character written as an escape (`\x1b`, `\n`, `\u{202e}`).
pub fn escape(s: &str) -> Cow<'_, str> {
    escape_except(s, &[])
}

/// As `escape`, but the characters in `keep` (a message's own line breaks)
/// stay as they are.
pub fn escape_except<'a>(s: &'a str, keep: &[char]) -> Cow<'a, str> {
    if !s.chars().any(|c| is_control(c) && !keep.contains(&c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_control(c) && !keep.contains(&c) {
            escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// How many bytes `escape` makes of `s`.
pub fn escaped_len(s: &str) -> usize {
    s.chars()
        .map(|c| {
            if !is_control(c) {
                c.len_utf8()
            } else if matches!(c, '\t' | '\n' | '\r') {
                2
            } else if (c as u32) < 0x80 {
                4
            } else {
                format!("{:x}", c as u32).len() + 4
            }
        })
        .sum()
}

/// Wraps one line of human output to `width`, continuing with `indent`.
/// Without a width the line is returned whole.
pub fn wrap(line: &str, width: Option<usize>, indent: &str) -> String {
    let Some(width) = width else {
        return line.to_string();
    };
    let lead: String = line.chars().take_while(|c| *c == ' ').collect();
    let options = textwrap::Options::new(width)
        .initial_indent(&lead)
        .subsequent_indent(indent)
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        // Node ids are full of hyphens; a line never breaks inside one.
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(line.trim_start_matches(' '), options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("gpu\x1b]0;pwned\x07-01"), "gpu\\x1b]0;pwned\\x07-01");
        assert_eq!(escape("a\x1b[31mb"), "a\\x1b[31mb");
        assert_eq!(escape("x\u{202e}y\u{9b}"), "x\\u{202e}y\\u{9b}");
        assert_eq!(escape("plain é"), "plain é");
        assert_eq!(escape_except("a\nb\x1b", &['\n']), "a\nb\\x1b");
        for s in ["a\x1b\u{202e}\u{9b}\t\n", "plain", "é\x7f"] {
            assert_eq!(escaped_len(s), escape(s).len(), "{s:?}");
        }
    }

    #[test]
    fn human_output_wraps_paragraphs_not_tables() {
        let text =
            "┌──────────────────────────────────────┐\n  0/3 nodes qualify: 3 are cordoned (a, b and c)\nshort\x1b\n";
        let out = human_at(text, Some(30));
        assert_eq!(
            out,
            "┌──────────────────────────────────────┐\n  0/3 nodes qualify: 3 are\n    cordoned (a, b and c)\nshort\\x1b\n"
        );
    }

    #[test]
    fn wrapping_keeps_the_lead_and_indents_what_follows() {
        let w = wrap("  profile a: 0/3 nodes qualify: 3 are cordoned", Some(24), "    ");
        assert_eq!(w, "  profile a: 0/3 nodes\n    qualify: 3 are\n    cordoned");
        assert_eq!(wrap("long line", None, ""), "long line");
        assert_eq!(wrap("needs 8 (gpu-h100-04)", Some(12), "  "), "needs 8\n  (gpu-h100-04)");
    }
}
