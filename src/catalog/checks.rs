//! Checks across a catalog's models and profiles: names given twice,
//! priorities that tie, disk checks that can never apply.

use crate::decode::Decoder;
use crate::diag::{Code, Diag};
use crate::doc::Span;

use super::Model;

pub(super) fn cross_checks(dec: &mut Decoder, models: &[Model]) {
    let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
    for m in models {
        if let Some(first) = seen.get(m.name.as_str()) {
            let d = Diag::error(Code::DuplicateModel, format!("model `{}` is defined twice", m.name))
                .at(&dec.src, m.name_span, "defined again here")
                .label(*first, "first defined here")
                .help("model names must be unique in a catalog: rename one, or merge their profiles");
            dec.push(d);
        } else {
            seen.insert(&m.name, m.name_span);
        }
        let mut profiles: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
        for p in &m.profiles {
            // The profiles of one `gpu_class` list share their name and place.
            if let Some(first) = profiles.get(p.name.as_str()).filter(|f| **f != p.name_span || p.classes.is_empty()) {
                let d = Diag::error(
                    Code::DuplicateProfile,
                    format!("model `{}` has two profiles named `{}`", m.name, p.name),
                )
                .at(&dec.src, p.name_span, "defined again here")
                .label(*first, "first defined here")
                .help("profile names must be unique within a model");
                dec.push(d);
            } else {
                profiles.insert(&p.name, p.name_span);
            }
            if p.min_disk_gb > 0 && p.source.is_none() {
                let d = Diag::warning(
                    Code::DiskWithoutSource,
                    format!("profile `{}` of `{}` sets min_disk_gb but no source", p.name, m.name),
                )
                .at(&dec.src, p.min_disk_span, "never checked")
                .help("the disk check only applies to weights llmgw can name: add `source` to the model or profile");
                dec.push(d);
            }
        }
        for (i, p) in m.profiles.iter().enumerate() {
            if let Some(q) = m.profiles[..i].iter().find(|q| q.priority == p.priority && q.name_span != p.name_span) {
                let d = Diag::warning(
                    Code::EqualPriority,
                    format!("profiles `{}` and `{}` of `{}` share priority {}", q.name, p.name, m.name, p.priority),
                )
                .at(&dec.src, p.priority_span, "same priority")
                .label(q.priority_span, "as this one")
                .help("ties are tried in file order; give each profile its own priority to say which comes first");
                dec.push(d);
                break;
            }
        }
        if m.profiles.is_empty() && m.replicas > 0 {
            let d = Diag::warning(Code::NoProfiles, format!("model `{}` has no profile", m.name))
                .at(&dec.src, m.name_span, "nothing to place it with")
                .help("add a [[model.profile]], or set replicas = 0");
            dec.push(d);
        }
    }
}
