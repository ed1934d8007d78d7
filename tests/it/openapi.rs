//! A structural OpenAPI v3 schema check, as the API server applies a CRD's
//! `openAPIV3Schema` to a custom object: types, required fields, enums,
//! bounds, lists and maps, and no field the schema does not know (the API
//! server would prune it silently: a typo in a field name would vanish).
//! CEL rules (`x-kubernetes-validations`) and `pattern` are not checked.

use serde_json::Value;

/// Every problem of `v` against `schema`, each with its JSON path.
pub fn check(schema: &Value, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(schema, v, "$", &mut out);
    out
}

fn walk(s: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if s.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        if !(v.is_i64() || v.is_u64() || v.is_string()) {
            out.push(format!("{path}: want an integer or a string, found {v}"));
        }
        return;
    }
    if let Some(any) = s.get("anyOf").and_then(Value::as_array)
        && !any.iter().any(|b| check(b, v).is_empty())
        && s.get("type").is_none()
    {
        out.push(format!("{path}: matches none of anyOf"));
        return;
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        for b in all {
            walk(b, v, path, out);
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        out.push(format!("{path}: {v} is not one of {}", Value::Array(e.clone())));
    }
    match s.get("type").and_then(Value::as_str) {
        Some("object") => object(s, v, path, out),
        Some("array") => {
            let Some(items) = v.as_array() else {
                out.push(format!("{path}: want an array, found {v}"));
                return;
            };
            if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                out.push(format!("{path}: more than {max} items"));
            }
            if let Some(item) = s.get("items") {
                for (i, x) in items.iter().enumerate() {
                    walk(item, x, &format!("{path}[{i}]"), out);
                }
            }
        }
        Some("string") => match v.as_str() {
            None => out.push(format!("{path}: want a string, found {v}")),
            Some(text) => {
                if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
                    && text.chars().count() as u64 > max
                {
                    out.push(format!("{path}: longer than {max}"));
                }
            }
        },
        Some("integer") => match v.as_i64() {
            None => out.push(format!("{path}: want an integer, found {v}")),
            Some(n) => {
                if s.get("minimum").and_then(Value::as_i64).is_some_and(|m| n < m) {
                    out.push(format!("{path}: {n} below the minimum"));
                }
                if s.get("maximum").and_then(Value::as_i64).is_some_and(|m| n > m) {
                    out.push(format!("{path}: {n} above the maximum"));
                }
            }
        },
        Some("number") if !v.is_number() => out.push(format!("{path}: want a number, found {v}")),
        Some("boolean") if !v.is_boolean() => out.push(format!("{path}: want a boolean, found {v}")),
        _ => {}
    }
}

fn object(s: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(map) = v.as_object() else {
        out.push(format!("{path}: want an object, found {v}"));
        return;
    };
    for r in s.get("required").and_then(Value::as_array).into_iter().flatten() {
        if let Some(k) = r.as_str()
            && !map.contains_key(k)
        {
            out.push(format!("{path}: `{k}` is required"));
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    let extra = s.get("additionalProperties");
    let open = s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        || s.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
    for (k, x) in map {
        let at = format!("{path}.{k}");
        match (props.and_then(|p| p.get(k)), extra) {
            (Some(ps), _) => walk(ps, x, &at, out),
            (None, Some(Value::Object(_))) => walk(extra.unwrap_or(&Value::Null), x, &at, out),
            (None, _) if props.is_none() || open => {}
            (None, _) => out.push(format!("{at}: not a field of the schema (the API server would drop it)")),
        }
    }
}
