//! Writing inventories (discover, merge, synth) in any of the three formats,
//! and writing files so that nothing is ever half-written.

use std::io::Write;
use std::path::Path;

use crate::cli::DataFormat;
use crate::inventory::Inventory;

pub fn format_for(path: Option<&Path>, flag: Option<DataFormat>) -> DataFormat {
    if let Some(f) = flag {
        return f;
    }
    match path.map(|p| crate::doc::Format::from_path(&p.to_string_lossy())) {
        Some(crate::doc::Format::Json) => DataFormat::Json,
        Some(crate::doc::Format::Yaml) => DataFormat::Yaml,
        _ => DataFormat::Toml,
    }
}

pub fn render_inventory(inv: &Inventory, format: DataFormat) -> Result<String, String> {
    match format {
        DataFormat::Toml => toml::to_string(inv).map_err(|e| e.to_string()),
        DataFormat::Json => serde_json::to_string_pretty(inv).map(|s| s + "\n").map_err(|e| e.to_string()),
        DataFormat::Yaml => {
            let v = serde_json::to_value(inv).map_err(|e| e.to_string())?;
            let mut out = String::new();
            yaml(&v, 0, &mut out, false);
            Ok(out)
        }
    }
}

/// A small block-style YAML writer for the inventory's own shape. Strings are
/// written as JSON strings, which YAML reads as double-quoted scalars with
/// the same escapes, so no value can be misread as a number or a boolean.
fn yaml(v: &serde_json::Value, indent: usize, out: &mut String, in_seq: bool) {
    use serde_json::Value;
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (i, (k, val)) in map.iter().enumerate() {
                if !(in_seq && i == 0) {
                    out.push_str(&pad);
                }
                out.push_str(&yaml_key(k));
                out.push(':');
                yaml_child(val, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                if !(in_seq && i == 0) {
                    out.push_str(&pad);
                }
                out.push_str("- ");
                match item {
                    Value::Object(m) if !m.is_empty() => yaml(item, indent + 2, out, true),
                    Value::Array(a) if !a.is_empty() => yaml(item, indent + 2, out, true),
                    _ => {
                        out.push_str(&inline(item));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn yaml_child(val: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    match val {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            yaml(val, indent + 2, out, false);
        }
        Value::Array(a) if !a.is_empty() && a.iter().any(|x| x.is_object() || x.is_array()) => {
            out.push('\n');
            yaml(val, indent + 2, out, false);
        }
        _ => {
            out.push(' ');
            out.push_str(&inline(val));
            out.push('\n');
        }
    }
}

/// A key is written bare when no YAML reader could take it for anything but
/// a string; otherwise quoted.
fn yaml_key(k: &str) -> String {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(
            k.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain { k.to_string() } else { serde_json::to_string(k).unwrap_or_default() }
}

/// JSON's flow syntax is valid YAML flow syntax.
fn inline(v: &serde_json::Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a
/// rename, so a reader sees the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".llmgw-").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_writer_round_trips_through_the_loader() {
        let v = serde_json::json!({"node": [{"id": "a:b", "labels": {"zone": "007"}, "gpu": [{"index": 0, "name": "X", "nvlink_peers": [1]}, {"index": 1, "name": "X"}], "weights": []}]});
        let mut out = String::new();
        yaml(&v, 0, &mut out, false);
        let root = crate::doc::parse(&out, crate::doc::Format::Yaml).expect(&out);
        let back = to_json(&root);
        assert_eq!(back, v, "{out}");
    }

    fn to_json(n: &crate::doc::Node<'_>) -> serde_json::Value {
        use crate::doc::Value;
        match &n.value {
            Value::Str(s) => serde_json::Value::String(s.to_string()),
            Value::Int(i) => (*i).into(),
            Value::Bool(b) => (*b).into(),
            Value::Array(a) => a.iter().map(to_json).collect(),
            Value::Table(t) => {
                t.iter().map(|e| (e.key.to_string(), to_json(&e.value))).collect::<serde_json::Map<_, _>>().into()
            }
            other => panic!("{other:?}"),
        }
    }
}
