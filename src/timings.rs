//! Phase timings on stderr when `LLMGW_TIMINGS` is set, for the scale check.

pub struct Timings {
    on: bool,
    last: std::time::Instant,
    laps: Vec<(&'static str, std::time::Duration)>,
}

impl Timings {
    pub fn start() -> Self {
        Timings { on: std::env::var_os("LLMGW_TIMINGS").is_some(), last: std::time::Instant::now(), laps: Vec::new() }
    }
    pub fn lap(&mut self, what: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((what, now - self.last));
        self.last = now;
    }
    pub fn report(&self) {
        if self.on {
            let parts: Vec<String> =
                self.laps.iter().map(|(w, d)| format!("{w} {:.0} ms", d.as_secs_f64() * 1000.0)).collect();
            eprintln!("timings: {}", parts.join(", "));
        }
    }
}
