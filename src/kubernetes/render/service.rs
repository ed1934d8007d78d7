//! The Service in front of a model's serving pods.

use std::collections::BTreeMap;

use crate::identity as keys;
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The model's Service: every pod that serves it (Deployments' pods, and
/// the leaders of LeaderWorkerSets) behind one name.
pub(super) fn service(model: &str, label: &str, name: String, port: u16, namespace: Option<String>) -> Service {
    let labels: BTreeMap<String, String> = [
        ("app.kubernetes.io/managed-by".to_string(), "llmgw".to_string()),
        ("app.kubernetes.io/name".to_string(), label.to_string()),
        (keys::MODEL.to_string(), label.to_string()),
    ]
    .into();
    let selector: BTreeMap<String, String> =
        [(keys::MODEL.to_string(), label.to_string()), (keys::SERVES.to_string(), "true".to_string())].into();
    Service {
        metadata: ObjectMeta {
            name: Some(name),
            namespace,
            labels: Some(labels),
            annotations: Some([(keys::MODEL.to_string(), model.to_string())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: i32::from(port),
                target_port: Some(IntOrString::String("http".into())),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}
