//! What a gateway routes by: an InferencePool per model (Gateway API
//! Inference Extension, `inference.networking.k8s.io/v1`) over the pods
//! that serve it, whose endpoint picker chooses the replica for each
//! request; and, given the Gateway, an HTTPRoute per model
//! (`gateway.networking.k8s.io/v1`) that sends the requests naming the
//! model to its pool. Typed here, as the Gateway API defines them; only
//! the fields llmgw writes.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::diag::{Code, Diag};
use crate::identity as keys;

/// The pool's API group, which an HTTPRoute's backendRef names.
pub const POOL_GROUP: &str = "inference.networking.k8s.io";

/// The header a gateway of the Inference Extension sets from the body's
/// `model`, and routes by.
pub const MODEL_HEADER: &str = "X-Gateway-Model-Name";

/// The port an endpoint picker listens on unless told otherwise.
pub const EPP_PORT: u16 = 9002;

/// `--gateway inference-pool --epp NAME[:PORT] [--gateway-parent NS/NAME]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gateway {
    pub epp: String,
    pub epp_port: u16,
    /// The Gateway the routes attach to: its namespace and name.
    pub parent: Option<(String, String)>,
    /// Each route rule's `timeouts.request` (`--route-timeout`).
    pub route_timeout: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InferencePool {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: InferencePoolSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InferencePoolSpec {
    pub selector: PoolSelector,
    pub target_ports: Vec<PortNumber>,
    pub endpoint_picker_ref: EndpointPickerRef,
}

/// The labels every pod of the pool carries (no expressions: the pool
/// takes only `matchLabels`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PoolSelector {
    pub match_labels: BTreeMap<String, String>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PortNumber {
    pub number: i32,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EndpointPickerRef {
    pub name: String,
    pub port: PortNumber,
    pub failure_mode: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRoute {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: HttpRouteSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    pub parent_refs: Vec<ParentRef>,
    pub rules: Vec<RouteRule>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ParentRef {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RouteRule {
    pub matches: Vec<RouteMatch>,
    pub backend_refs: Vec<BackendRef>,
    /// How long a request may take: a gateway's default (often 15 to 30 s)
    /// would cut a long generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<RouteTimeouts>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RouteTimeouts {
    pub request: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RouteMatch {
    pub headers: Vec<HeaderMatch>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HeaderMatch {
    #[serde(rename = "type")]
    pub type_: String,
    pub name: String,
    pub value: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BackendRef {
    pub group: String,
    pub kind: String,
    pub name: String,
}

/// What a model's pool and route are made from.
pub(super) struct Pool<'a> {
    pub model: &'a str,
    pub label: &'a str,
    /// The Service's name, which the pool and the route share.
    pub name: &'a str,
    pub port: u16,
    pub namespace: Option<String>,
}

impl Pool<'_> {
    fn meta(&self) -> ObjectMeta {
        let labels: BTreeMap<String, String> = [
            ("app.kubernetes.io/managed-by".to_string(), "llmgw".to_string()),
            ("app.kubernetes.io/name".to_string(), self.label.to_string()),
            (keys::MODEL.to_string(), self.label.to_string()),
        ]
        .into();
        ObjectMeta {
            name: Some(self.name.to_string()),
            namespace: self.namespace.clone(),
            labels: Some(labels),
            annotations: Some([(keys::MODEL.to_string(), self.model.to_string())].into()),
            ..ObjectMeta::default()
        }
    }

    /// The model's pool: the pods its Service selects (Deployments' pods,
    /// the leaders of LeaderWorkerSets), on the port they serve.
    pub fn pool(&self, g: &Gateway) -> InferencePool {
        let match_labels: BTreeMap<String, String> =
            [(keys::MODEL.to_string(), self.label.to_string()), (keys::SERVES.to_string(), "true".to_string())].into();
        InferencePool {
            api_version: format!("{POOL_GROUP}/v1"),
            kind: "InferencePool".into(),
            metadata: self.meta(),
            spec: InferencePoolSpec {
                selector: PoolSelector { match_labels },
                target_ports: vec![PortNumber { number: i32::from(self.port) }],
                endpoint_picker_ref: EndpointPickerRef {
                    name: g.epp.clone(),
                    port: PortNumber { number: i32::from(g.epp_port) },
                    // A picker that is down must not take the model down:
                    // the gateway then picks among the pool itself.
                    failure_mode: "FailOpen".into(),
                },
            },
        }
    }

    /// The route from the Gateway `ns/name` to the pool, for requests
    /// that name this model.
    pub fn route(&self, (ns, name): &(String, String), timeout: &str) -> HttpRoute {
        HttpRoute {
            api_version: "gateway.networking.k8s.io/v1".into(),
            kind: "HTTPRoute".into(),
            metadata: self.meta(),
            spec: HttpRouteSpec {
                parent_refs: vec![ParentRef {
                    group: "gateway.networking.k8s.io".into(),
                    kind: "Gateway".into(),
                    namespace: ns.clone(),
                    name: name.clone(),
                }],
                rules: vec![RouteRule {
                    matches: vec![RouteMatch {
                        headers: vec![HeaderMatch {
                            type_: "Exact".into(),
                            name: MODEL_HEADER.into(),
                            value: self.model.to_string(),
                        }],
                    }],
                    backend_refs: vec![BackendRef {
                        group: POOL_GROUP.into(),
                        kind: "InferencePool".into(),
                        name: self.name.to_string(),
                    }],
                    timeouts: Some(RouteTimeouts { request: timeout.to_string() }),
                }],
            },
        }
    }
}

/// `--epp NAME[:PORT]`: a Service's name (a label that begins with a
/// letter) and a port.
pub fn epp(v: &str) -> Result<(String, u16), Diag> {
    let bad = |why: &str| {
        Diag::error(Code::BadArgument, format!("--epp {}: {why}", crate::term::escape(v))).help(
            "the endpoint picker's Service, as NAME or NAME:PORT (e.g. vllm-llama3-8b-instruct-epp:9002); \
             NAME is at most 63 lower-case letters, digits and `-`, beginning with a letter",
        )
    };
    let (name, port) = match v.split_once(':') {
        Some((n, p)) => {
            // Digits only, as a port is written: no sign, no leading zero.
            let digits = !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && !p.starts_with('0');
            let port = p
                .parse::<u16>()
                .ok()
                .filter(|_| digits)
                .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
            (n, port)
        }
        None => (v, EPP_PORT),
    };
    if name.is_empty() {
        return Err(bad("no Service name"));
    }
    if !crate::names::dns_label(name) || !name.as_bytes()[0].is_ascii_lowercase() {
        return Err(bad("not a Service name"));
    }
    Ok((name.to_string(), port))
}

/// `--gateway-parent NS/NAME`: the Gateway's namespace (a label) and name
/// (a DNS subdomain: labels joined by `.`, at most 253 characters).
pub fn parent(v: &str) -> Result<(String, String), Diag> {
    let bad = || {
        Diag::error(Code::BadArgument, format!("--gateway-parent {}: not NAMESPACE/NAME", crate::term::escape(v))).help(
            "the Gateway the routes attach to, as NAMESPACE/NAME (e.g. serving/inference-gateway): lower-case \
             letters, digits and `-`, a name may also hold `.`",
        )
    };
    let (ns, name) = v.split_once('/').ok_or_else(bad)?;
    let subdomain = name.len() <= 253 && name.split('.').all(crate::names::dns_label);
    if crate::names::dns_label(ns) && subdomain { Ok((ns.to_string(), name.to_string())) } else { Err(bad()) }
}

/// The gateway `render kubernetes` was asked for, from its flags, each
/// checked.
pub fn from_flags(
    epp_flag: Option<&str>,
    parent_flag: Option<&str>,
    route_timeout: &str,
) -> Result<Option<Gateway>, Diag> {
    let Some(e) = epp_flag else { return Ok(None) };
    let (epp, epp_port) = epp(e)?;
    let parent = parent_flag.map(parent).transpose()?;
    if !duration(route_timeout) {
        return Err(Diag::error(
            Code::BadArgument,
            format!("--route-timeout {}: not a Gateway API duration", crate::term::escape(route_timeout)),
        )
        .help(
            "one to four whole numbers, each with h, m, s or ms: 300s, 10m, 1h30m (the HTTPRoute CRD's own pattern)",
        ));
    }
    Ok(Some(Gateway { epp, epp_port, parent, route_timeout: route_timeout.to_string() }))
}

/// A Gateway API `Duration` as the HTTPRoute CRD validates it:
/// `^([0-9]{1,5}(h|m|s|ms)){1,4}$`.
fn duration(v: &str) -> bool {
    let mut rest = v;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if !(1..=5).contains(&digits) {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ms", "h", "m", "s"].into_iter().find(|u| rest.starts_with(u));
        let Some(u) = unit else { return false };
        rest = &rest[u.len()..];
        parts += 1;
    }
    (1..=4).contains(&parts)
}

/// What to warn of in the pools written (by name): several pools naming
/// one endpoint picker, and models whose replicas listen on different
/// ports (`apart`).
pub(super) fn warnings(pools: &[&str], gateway: Option<&Gateway>, apart: &[String], models: &[&str]) -> Vec<Diag> {
    let mut out = Vec::new();
    // A route matches the model's name in a header: HTTP strips a value's
    // surrounding blanks, and the HTTPRoute CRD holds at most 4096
    // characters, so such a name is never matched, or its route refused.
    let unroutable: Vec<String> = models
        .iter()
        .filter(|m| m.trim() != **m || m.chars().count() > 4096)
        .map(|m| format!("`{}`", crate::term::escape(&m.chars().take(40).collect::<String>())))
        .collect();
    if gateway.is_some_and(|g| g.parent.is_some()) && !unroutable.is_empty() {
        out.push(
            Diag::warning(
                Code::HeaderValue,
                format!(
                    "{}: a model name with blanks around it, or over 4096 characters, is not matched in the {MODEL_HEADER} header",
                    crate::diag::shorten(&unroutable.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("name the model in the catalog as clients will send it, without blanks around it"),
        );
    }
    if let Some(g) = gateway
        && pools.len() > 1
    {
        out.push(
                Diag::warning(
                    Code::SharedPicker,
                    format!(
                        "{} InferencePools ({}) name one endpoint picker, {}: a picker picks from the one pool it is started for (--pool-name), so requests for the other models would reach its pool's pods",
                        pools.len(),
                        crate::diag::shorten(pools, 3),
                        g.epp
                    ),
                )
                .help("an endpoint picker serves one pool: give each model its own picker and render its plan into a folder of its own with that --epp"),
            );
    }
    if !apart.is_empty() {
        out.push(
            Diag::warning(
                Code::PortsApart,
                format!(
                    "{}: the replicas of a model listen on different ports; its InferencePool targets the first one's only",
                    crate::diag::shorten(&apart.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("give the model's profiles one `port`, so the gateway reaches every replica"),
        );
    }
    out
}
