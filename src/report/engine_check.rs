//! `engine-check` output: a table, or `{"engines": [...]}`.

use serde::Serialize;

use crate::engine_check::Check;

pub fn json<W: std::io::Write>(out: W, checks: &[Check]) -> std::io::Result<()> {
    #[derive(Serialize)]
    struct Doc<'a> {
        engines: &'a [Check],
    }
    crate::json::write_json(out, &Doc { engines: checks })
}

pub fn human(checks: &[Check]) -> String {
    let mut t = super::table(&["ENGINE", "PATH", "VERSION", "STATUS"]);
    for c in checks {
        let status = if c.detail.is_empty() { c.status.to_string() } else { format!("{}: {}", c.status, c.detail) };
        let shown = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
        t.add_row(vec![c.engine.to_string(), shown(&c.path), shown(&c.version), status]);
    }
    format!("{t}\n")
}
