//! completions/ and man/ are generated from the clap definitions; this fails
//! when they are stale. `LLMGW_REGENERATE=1 cargo test --test it generated`
//! rewrites them.

use std::path::Path;

fn check(path: &Path, want: &[u8], stale: &mut Vec<String>) {
    if std::env::var_os("LLMGW_REGENERATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, want).unwrap();
        return;
    }
    if std::fs::read(path).ok().as_deref() != Some(want) {
        stale.push(path.display().to_string());
    }
}

#[test]
fn completions_and_man_pages_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for (shell, file) in llmgw::commands::generate::COMPLETION_FILES {
        check(&root.join("completions").join(file), &llmgw::commands::generate::completions(*shell), &mut stale);
    }
    let pages = llmgw::commands::generate::man_pages().unwrap();
    assert!(pages.len() >= 10, "one page per command");
    for (name, bytes) in &pages {
        check(&root.join("man").join(name), bytes, &mut stale);
    }
    // No page left over from a command that no longer exists.
    if std::env::var_os("LLMGW_REGENERATE").is_none() {
        for e in std::fs::read_dir(root.join("man")).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if !pages.iter().any(|(n, _)| *n == name) {
                stale.push(format!("man/{name} (no such command)"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {stale:?}\nrun: LLMGW_REGENERATE=1 cargo test --test it generated"
    );
}

#[test]
fn every_man_page_says_exit_status_environment_files_and_examples() {
    let pages = llmgw::commands::generate::man_pages().unwrap();
    for (name, bytes) in &pages {
        let text = String::from_utf8_lossy(bytes);
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"] {
            assert!(text.contains(section), "{name} has no {section}");
        }
    }
    let with_examples = pages.iter().filter(|(_, b)| String::from_utf8_lossy(b).contains(".SH EXAMPLES")).count();
    assert_eq!(with_examples, pages.len(), "every page has examples");
}
