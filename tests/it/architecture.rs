//! The shape of the source tree: no import cycle between modules, no
//! import that runs back up a floor, no file over 450 lines, every
//! command's entry point under `src/commands/`.
//!
//! A module may use its ancestors (a child reading its parent's types is
//! how Rust modules share); any other use is an edge, and the edges must
//! not close a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `src/placement/fast.rs` -> `placement::fast`; `src/report/mod.rs` -> `report`.
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without comments and string contents, crudely.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.split("//").next().unwrap_or("");
            let mut out = String::new();
            let mut in_str = false;
            for c in l.chars() {
                if c == '"' {
                    in_str = !in_str;
                } else if !in_str {
                    out.push(c);
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Every module path a file names: `crate::a::b`, `crate::{a, b::c}`, `super::x`.
fn referenced(module: &str, code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let parent: Vec<String> = module.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let mut push_path = |base: &[String], rest: &str| {
        let mut path = base.to_vec();
        let mut r = rest;
        loop {
            let id = ident(r);
            if id.is_empty() {
                break;
            }
            path.push(id.clone());
            r = &r[id.len()..];
            match r.strip_prefix("::") {
                Some(next) if !next.starts_with('{') => r = next,
                _ => break,
            }
        }
        out.push(path);
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner: String = group.chars().take_while(|c| *c != '}').collect();
            for item in inner.split(',') {
                push_path(&[], item.trim());
            }
        } else {
            push_path(&[], rest);
        }
    }
    for (i, _) in code.match_indices("super::") {
        let before = &code[..i];
        if before.ends_with("::") {
            continue;
        }
        let base = &parent[..parent.len().saturating_sub(1)];
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner: String = group.chars().take_while(|c| *c != '}').collect();
            for item in inner.split(',') {
                push_path(base, item.trim());
            }
        } else {
            push_path(base, rest);
        }
    }
    out
}

/// The program's code of a file: without a trailing `#[cfg(test)]` module,
/// and nothing of a file in a `tests` folder.
fn program_code(path: &Path, text: &str) -> String {
    if path.components().any(|c| c.as_os_str() == "tests") {
        return String::new();
    }
    let text = text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i]);
    code(text)
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    graph_of(|_, text| code(text))
}

fn graph_of(read: impl Fn(&Path, &str) -> String) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let modules: BTreeSet<String> = all.iter().map(|p| module_of(p)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let m = module_of(f);
        let text = read(f, &std::fs::read_to_string(f).unwrap());
        let entry = edges.entry(m.clone()).or_default();
        for path in referenced(&m, &text) {
            // The deepest module the path names.
            let target = (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|p| modules.contains(p));
            let Some(t) = target else { continue };
            let ancestor = m == t || m.starts_with(&format!("{t}::")) || t.is_empty();
            if !ancestor {
                entry.insert(t);
            }
        }
    }
    edges
}

/// Strongly connected components with more than one module.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(n) = stack.pop() {
            for t in edges.get(&n).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    stack.push(t.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = edges.keys().map(|k| (k, reach(k))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for k in edges.keys() {
        if done.contains(k) {
            continue;
        }
        let comp: Vec<String> = edges
            .keys()
            .filter(|o| *o == k || (reachable[k].contains(*o) && reachable[*o].contains(k)))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        if comp.len() > 1 {
            out.push(comp);
        }
    }
    out
}

#[test]
fn no_import_cycle_between_modules() {
    let edges = graph();
    assert!(edges.get("commands::place").is_some_and(|e| e.contains("placement")), "the scan sees imports: {edges:#?}");
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            let links: Vec<String> = c
                .iter()
                .flat_map(|a| edges[a].iter().filter(|b| c.contains(b)).map(move |b| format!("{a} -> {b}")))
                .collect();
            links.join(", ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles:\n{}", shown.join("\n"));
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    e.insert("a".into(), ["b".to_string()].into());
    e.insert("b".into(), ["a".to_string()].into());
    e.insert("c".into(), ["a".to_string()].into());
    assert_eq!(cycles(&e), vec![vec!["a".to_string(), "b".to_string()]]);
    let refs = referenced("x::y", "use crate::{a::b, c};\nuse super::z::Q;\ncrate::d::e();");
    assert_eq!(refs, vec![vec!["a", "b"], vec!["c"], vec!["d", "e"], vec!["x", "z", "Q"]]);
}

/// The floors of the house, from the ground up. A top-level module (a file
/// `src/NAME.rs` or a folder `src/NAME/`) may use only modules on floors
/// below its own: small shared types stand low, the placement core in the
/// middle, the writers above it, the commands on top. A new module gets a
/// floor here, or this test fails. Tests inside `src/` may reach higher
/// (the placement invariants are checked through the JSON `place` writes).
const FLOORS: &[&[&str]] = &[
    // The ground: no import of the crate's own.
    &["doc", "term", "process", "timings", "shape", "units", "names", "vendor", "json"],
    &["taints", "source", "share"],
    &["diag"],
    // How a command ends, and reading input.
    &["exit", "input", "decode", "kinds", "import"],
    // What the fleet and the catalog are made of.
    &["engines", "identity"],
    &["engine_check", "inventory"],
    &["images"],
    &["catalog"],
    &["launch", "load"],
    // Deciding.
    &["synth", "placement", "discovery"],
    &["wording"],
    &["plan"],
    &["usage", "fit", "diff", "capacity"],
    // Saying and writing.
    &["report"],
    &["output"],
    &["render"],
    &["kubernetes", "map"],
    &["slurm"],
    // The commands.
    &["cli"],
    &["commands"],
    &["lib"],
];

/// A module's room: its top-level module; the crate root is `lib`.
fn room(module: &str) -> &str {
    match module.split("::").next() {
        Some("") | None => "lib",
        Some(top) => top,
    }
}

/// Each import from a room to one on its own floor or higher, as
/// `from -> to (floor a -> floor b)`; and each room on no floor.
fn back_up(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let floor = |r: &str| FLOORS.iter().position(|f| f.contains(&r));
    let mut out = BTreeSet::new();
    for (from, tos) in edges {
        for to in tos {
            let (a, b) = (room(from), room(to));
            if a == b {
                continue;
            }
            match (floor(a), floor(b)) {
                (Some(x), Some(y)) if y < x => {}
                (Some(x), Some(y)) => {
                    let to = if to.is_empty() { "lib (the crate root)" } else { to };
                    out.insert(format!("{from} -> {to} (floor {} -> floor {})", x + 1, y + 1));
                }
                (x, y) => {
                    for (r, f) in [(a, x), (b, y)] {
                        if f.is_none() {
                            out.insert(format!("{r} is on no floor: give it one in FLOORS"));
                        }
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Each module that names an item of the crate root (`crate::Exit`), an
/// edge to the root's room, `lib`: a type defined in lib.rs and used by
/// the commands is an import that runs back up.
fn root_items(edges: &mut BTreeMap<String, BTreeSet<String>>) {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let modules: BTreeSet<String> = all.iter().map(|p| module_of(p)).collect();
    for f in &all {
        let m = module_of(f);
        let text = program_code(f, &std::fs::read_to_string(f).unwrap());
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + 7..];
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').map(|s| ident(s.trim())).collect(),
                None => vec![ident(rest)],
            };
            if names.iter().any(|n| !n.is_empty() && !modules.contains(n)) && !m.is_empty() {
                edges.entry(m.clone()).or_default().insert(String::new());
            }
        }
    }
}

#[test]
fn no_import_runs_back_up() {
    let mut edges = graph_of(program_code);
    root_items(&mut edges);
    assert!(edges.get("report::place").is_some_and(|e| e.contains("placement")), "the scan sees imports: {edges:#?}");
    let found = back_up(&edges);
    assert!(found.is_empty(), "imports that run back up a floor:\n{}", found.join("\n"));
}

#[test]
fn the_floor_check_finds_an_import_that_runs_back_up() {
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    e.insert("report::place".into(), ["placement".to_string(), "units".to_string()].into());
    e.insert("inventory".into(), ["render::out".to_string()].into());
    e.insert("engines".into(), ["identity".to_string(), "nowhere::x".to_string()].into());
    e.insert("commands::place".into(), [String::new()].into());
    assert_eq!(
        back_up(&e),
        [
            "commands::place -> lib (the crate root) (floor 20 -> floor 21)",
            "engines -> identity (floor 5 -> floor 5)",
            "inventory -> render::out (floor 6 -> floor 16)",
            "nowhere is on no floor: give it one in FLOORS",
        ]
    );
    let text = "use crate::a::B;\n#[cfg(test)]\nmod tests {\n    use crate::c::D;\n}\n";
    assert_eq!(program_code(Path::new("src/x.rs"), text).trim(), "use crate::a::B;");
    assert_eq!(program_code(Path::new("src/placement/tests/mod.rs"), text), "");
}

#[test]
fn no_source_file_is_over_450_lines() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let long: Vec<String> = all
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > 450)
        .map(|(f, n)| format!("{}: {n}", f.display()))
        .collect();
    assert!(long.is_empty(), "{long:?}");
}

#[test]
fn every_command_runs_from_the_commands_folder() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    for f in all {
        let m = module_of(&f);
        if m.starts_with("commands") || m == "cli" || m.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains("crate::cli::") && !text.contains("use crate::cli"), "{m} uses the clap types");
    }
}

/// `rust-version` is the real minimum: the highest any dependency
/// (dev-dependencies included) declares.
#[test]
fn rust_version_is_the_highest_any_dependency_needs() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        eprintln!("SKIPPED rust_version_is_the_highest_any_dependency_needs: cargo metadata failed");
        return;
    };
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let version =
        |s: &str| s.split('.').map(|p| p.parse::<u32>().unwrap_or(0)).chain([0, 0]).take(3).collect::<Vec<_>>();
    let packages = meta["packages"].as_array().unwrap();
    let ours = packages.iter().find(|p| p["name"] == "llmgw").unwrap()["rust_version"].as_str().unwrap().to_string();
    let (needed, by) = packages
        .iter()
        .filter(|p| p["name"] != "llmgw")
        .filter_map(|p| Some((version(p["rust_version"].as_str()?), p["name"].as_str()?.to_string())))
        .max()
        .unwrap();
    assert_eq!(version(&ours), needed, "Cargo.toml says rust-version = {ours}, but {by} needs {needed:?}");
}
