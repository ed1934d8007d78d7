//! Which GPU taint a replica tolerates without saying so: the one its
//! GPUs' vendor puts on their nodes, as render writes it.

use super::Fleet;
use crate::catalog::Profile;
use crate::vendor::Vendor;

impl Fleet<'_> {
    /// The GPU taint a replica of `p` tolerates without saying so: its
    /// GPUs' device plugin resource, as render writes it; NVIDIA's for a
    /// class the fleet lacks (docs/kubernetes.md); none for CPU, or a class both make.
    pub fn implicit_toleration(&self, p: &Profile) -> Option<&'static str> {
        let class = p.gpu_class.as_deref().map(|c| self.class_ids.get(c));
        let vendor = class.and_then(|c| c.map_or(Some(Vendor::Nvidia), |&c| self.class_vendor[c as usize]));
        vendor.filter(|_| !p.cpu_only()).map(Vendor::resource)
    }
}
