//! The docs cannot go stale: every `$ llmgw ...` example in README.md and
//! docs/*.md runs, on the files the repository ships, and prints what the
//! page shows, with the exit code the page shows.
//!
//! How a page is read:
//! - In a fenced block, a line `$ llmgw ...` (or `$ cat FILE`) is a command;
//!   the lines after it, up to the next `$ ` line or the end of the block,
//!   are what it prints (standard error, then standard output).
//! - A line `...` in the shown output stands for any lines (an excerpt).
//! - The command must exit 0, unless its line ends with `# exits N`, or the
//!   shown output lists replicas left unplaced ("not placed"), which
//!   `place` answers with 1.
//! - Human output is fitted to 120 columns, as on a wide terminal.
//! - `LLMGW_REGENERATE=1 cargo test --test it docs` rewrites what the pages
//!   show for every example that is not an excerpt; read the diff.
//! - Each page runs in one folder of its own, holding copies of the
//!   repository's catalog/, examples/ and tests/data/, its commands one
//!   after another, so a page may place, then diff what it placed.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// One `$` command of a page and what the page shows it printing.
struct Example {
    /// 1-based line of the `$` command.
    line: usize,
    command: String,
    exits: i32,
    shown: Vec<String>,
}

fn examples(text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    let mut current: Option<Example> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            out.extend(current.take());
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.extend(current.take());
            if !(cmd.starts_with("llmgw ") || cmd.starts_with("cat ")) {
                continue;
            }
            let (command, exits) = match cmd.split_once(" # exits ") {
                Some((c, rest)) => {
                    (c.trim().to_string(), rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap())
                }
                None => (cmd.trim().to_string(), 0),
            };
            current = Some(Example { line: i + 1, command, exits, shown: Vec::new() });
        } else if let Some(e) = current.as_mut() {
            e.shown.push(line.to_string());
        }
    }
    out.extend(current);
    for e in &mut out {
        while e.shown.last().is_some_and(|l| l.trim().is_empty()) {
            e.shown.pop();
        }
        if e.exits == 0 && e.shown.iter().any(|l| l.contains("not placed")) {
            e.exits = 1;
        }
    }
    out
}

/// Whether `got` is `shown`, with each `...` line standing for any lines.
fn matches(shown: &[String], got: &[&str]) -> bool {
    let Some(at) = shown.iter().position(|l| l.trim() == "...") else {
        return shown.len() == got.len() && shown.iter().zip(got).all(|(a, b)| a.trim_end() == b.trim_end());
    };
    let (head, tail) = (&shown[..at], &shown[at + 1..]);
    if got.len() < head.len() || !head.iter().zip(got).all(|(a, b)| a.trim_end() == b.trim_end()) {
        return false;
    }
    (head.len()..=got.len()).any(|skip| matches(tail, &got[skip..]))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// Every example of one page: the problems found, each naming its line.
/// With `LLMGW_REGENERATE=1`, the shown output of examples that are not
/// excerpts is replaced by what they print.
fn check_page(page: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for sub in ["catalog", "examples", "tests/data"] {
        copy_tree(&root().join(sub), &dir.path().join(sub));
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_llmgw")).parent().unwrap().to_path_buf();
    let mut problems = Vec::new();
    let regenerate = std::env::var("LLMGW_REGENERATE").is_ok_and(|v| v == "1");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut shift: isize = 0;
    for e in examples(&text) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(&e.command)
            .current_dir(dir.path())
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
            .env("NO_COLOR", "1")
            // The user the pages' examples run as (`render slurm --stop`
            // names the submitting user).
            .env("USER", "alice")
            .env_remove("CLICOLOR_FORCE")
            .env("COLUMNS", "120")
            .output()
            .unwrap();
        // Warnings come before what they warn about, as on a terminal.
        let printed = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        let got: Vec<&str> = printed.trim_end().lines().collect();
        let code = out.status.code().unwrap_or(-1);
        if code != e.exits {
            problems
                .push(format!("{page}:{}: `{}` exits {code}, the page says {}\n{printed}", e.line, e.command, e.exits));
        } else if !matches(&e.shown, &got) && regenerate && !e.shown.iter().any(|l| l.trim() == "...") {
            let at = (e.line as isize + shift) as usize;
            let new: Vec<String> = got.iter().map(|l| l.trim_end().to_string()).collect();
            lines.splice(at..at + e.shown.len(), new.clone());
            shift += new.len() as isize - e.shown.len() as isize;
        } else if !matches(&e.shown, &got) {
            problems.push(format!(
                "{page}:{}: `{}` prints:\n{printed}\n--- the page shows:\n{}",
                e.line,
                e.command,
                e.shown.join("\n")
            ));
        }
    }
    if regenerate {
        std::fs::write(root().join(page), lines.join("\n") + "\n").unwrap();
    }
    problems
}

fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn every_example_in_the_readme_and_docs_prints_what_the_page_shows() {
    let mut problems = Vec::new();
    let mut ran = 0;
    for page in pages() {
        ran += examples(&std::fs::read_to_string(root().join(&page)).unwrap()).len();
        problems.extend(check_page(&page));
    }
    assert!(problems.is_empty(), "{} stale examples:\n\n{}", problems.len(), problems.join("\n\n"));
    assert!(ran >= 20, "only {ran} examples found: has the page format changed?");
}

#[test]
fn a_stale_example_is_caught() {
    let page = "$ llmgw lint tests/data/bad/unknown-field.toml # exits 1\nwhat it never printed\n";
    let ex = examples(&format!("```\n{page}```\n"));
    assert_eq!(ex.len(), 1);
    assert_eq!(ex[0].exits, 1);
    assert!(!matches(&ex[0].shown, &["something else"]));
    let shown: Vec<String> = ["a", "...", "z"].iter().map(ToString::to_string).collect();
    assert!(matches(&shown, &["a", "b", "c", "z"]));
    assert!(matches(&shown, &["a", "z"]));
    assert!(!matches(&shown, &["a", "b"]));
}

/// The field names a section's table lists in its first column.
fn table_fields(page: &str, heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let start = text.find(heading).unwrap_or_else(|| panic!("{page} has no `{heading}`"));
    let body = &text[start + heading.len()..];
    let end = body.find("\n#").unwrap_or(body.len());
    body[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(f, _)| f.to_string()))
        .collect()
}

#[test]
fn the_format_pages_list_every_field_the_loaders_know_and_no_other() {
    let same = |page: &str, heading: &str, known: &[&str]| {
        let mut listed = table_fields(page, heading);
        listed.sort();
        let mut known: Vec<String> = known.iter().map(ToString::to_string).collect();
        known.sort();
        assert_eq!(listed, known, "{page}, {heading}");
    };
    same("docs/catalog.md", "## Models: `[[model]]`", llmgw::catalog::MODEL_FIELDS);
    same("docs/catalog.md", "## Profiles: `[[model.profile]]`", llmgw::catalog::PROFILE_FIELDS);
    for (heading, table) in [
        ("## Nodes: `[[node]]`", "node"),
        ("## GPUs: `[[node.gpu]]`", "gpu"),
        ("## Fabrics: `[[node.fabric]]`", "fabric"),
        ("## Allocations: `[[node.allocation]]`", "allocation"),
    ] {
        same("docs/inventory.md", heading, llmgw::inventory::field_names(table));
    }
}

#[test]
fn the_default_image_table_of_the_docs_is_the_one_render_uses() {
    let text = std::fs::read_to_string(root().join("docs/serving.md")).unwrap();
    let start = text.find("## Default images").expect("docs/serving.md has `## Default images`");
    let body = &text[start..];
    let end = body[3..].find("\n## ").map_or(body.len(), |e| e + 3);
    let rows: Vec<Vec<String>> = body[..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| engine") && !l.starts_with("|---"))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().trim_matches('`').to_string()).collect())
        .collect();
    let cell = |v: Option<&str>| v.map_or_else(|| "none".to_string(), str::to_string);
    let want: Vec<Vec<String>> = llmgw::images::TABLE
        .iter()
        .map(|i| {
            let cpu = if i.cpu == i.gpu { "the same".to_string() } else { cell(i.cpu) };
            vec![
                i.engine.to_string(),
                i.arch.as_str().to_string(),
                cell(i.gpu),
                cpu,
                i.released.to_string(),
                i.source.to_string(),
            ]
        })
        .collect();
    assert_eq!(rows, want, "docs/serving.md's table and src/images.rs say the same");
    for i in llmgw::images::TABLE {
        for image in [i.gpu, i.cpu].into_iter().flatten() {
            assert!(!image.ends_with(":latest") && image.contains(':'), "{}: pin a release", i.engine);
        }
        if i.arch == llmgw::images::Arch::Amd64 {
            assert_eq!(Some(llmgw::launch::default_image(i.engine, true)), i.gpu);
        }
    }
    // Every engine has a row for each architecture: no arm64 node is left
    // to guess.
    for e in ["vllm", "sglang", "tgi", "llama.cpp", "trtllm", "ollama"] {
        for a in [llmgw::images::Arch::Amd64, llmgw::images::Arch::Arm64] {
            assert_eq!(llmgw::images::TABLE.iter().filter(|i| i.engine == e && i.arch == a).count(), 1, "{e} {a:?}");
        }
    }
}

#[test]
fn the_rocm_image_table_of_the_docs_is_the_one_render_uses() {
    let text = std::fs::read_to_string(root().join("docs/serving.md")).unwrap();
    let start = text.find("## Default images on AMD GPUs").expect("docs/serving.md has the ROCm table");
    let body = &text[start..];
    let end = body[3..].find("\n## ").map_or(body.len(), |e| e + 3);
    let rows: Vec<Vec<String>> = body[..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| engine") && !l.starts_with("|---"))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().trim_matches('`').to_string()).collect())
        .collect();
    let want: Vec<Vec<String>> = llmgw::images::ROCM
        .iter()
        .map(|i| vec![i.engine.to_string(), i.image.to_string(), i.released.to_string(), i.source.to_string()])
        .collect();
    assert_eq!(rows, want, "docs/serving.md's ROCm table and src/images.rs say the same");
    for i in llmgw::images::ROCM {
        assert!(!i.image.ends_with(":latest") && i.image.contains("rocm"), "{}: pin a ROCm release", i.engine);
    }
}
