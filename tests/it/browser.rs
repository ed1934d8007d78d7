//! A real headless Chromium for the map's tests: Debian's `chromium`,
//! which `.ci/chromium` installs and names in LLMGW_CHROMIUM. Started with
//! a fresh profile and the flags that keep it off the network (this
//! machine refuses the network; without them it keeps trying).
//!
//! What the page looks like once loaded comes back two ways: the DOM as
//! Chromium serialises it (`--dump-dom`), read here into elements and
//! their attributes, and a screenshot (`--screenshot`), a PNG.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser, or `None` after saying loudly why the test is skipped.
pub fn chromium(test: &str) -> Option<PathBuf> {
    match std::env::var_os("LLMGW_CHROMIUM").filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            eprintln!(
                "SKIPPED: {test}: LLMGW_CHROMIUM is not set; `.ci/chromium` installs Chromium and prints its path, \
                 .ci/run always does"
            );
            None
        }
    }
}

const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
];

/// Runs Chromium on `page` with `extra` flags; its stdout, and how long it took.
pub fn run(chromium: &Path, page: &Path, extra: &[String]) -> (Vec<u8>, Duration) {
    run_at(chromium, page, "", extra)
}

/// As `run`, with `#fragment` after the page's URL (empty: none).
pub fn run_at(chromium: &Path, page: &Path, fragment: &str, extra: &[String]) -> (Vec<u8>, Duration) {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}{fragment}", page.canonicalize().unwrap().display());
    let start = Instant::now();
    let mut child = Command::new(chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v).unwrap_or_default()
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut v = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut v).map(|_| v).unwrap_or_default()
    });
    // A browser that hangs fails the test instead of the suite.
    let deadline = start + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish with {} within 180 s", page.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = start.elapsed();
    let out = reader.join().unwrap();
    let err = errors.join().unwrap();
    assert!(status.success(), "chromium failed ({status}) on {}: {err}", page.display());
    (out, took)
}

/// The DOM once the page has loaded and its script has run.
pub fn dom(chromium: &Path, page: &Path) -> Dom {
    dom_at(chromium, page, "")
}

/// As `dom`, the page opened at `#fragment`.
pub fn dom_at(chromium: &Path, page: &Path, fragment: &str) -> Dom {
    let (out, _) = run_at(chromium, page, fragment, &["--dump-dom".to_string()]);
    Dom::parse(&String::from_utf8(out).expect("the DOM is UTF-8"))
}

/// A screenshot of the page at `width` x `height`: (width, height, RGBA pixels).
pub fn screenshot(chromium: &Path, page: &Path, width: u32, height: u32) -> (u32, u32, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("shot.png");
    run(chromium, page, &[format!("--window-size={width},{height}"), format!("--screenshot={}", png.display())]);
    decode_png(&std::fs::read(&png).expect("chromium wrote the screenshot"))
}

pub fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a PNG that decodes");
    buf.truncate(info.buffer_size());
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf.chunks(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        png::ColorType::GrayscaleAlpha => buf.chunks(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (info.width, info.height, rgba)
}

/// One element: its tag and attributes (entities decoded).
#[derive(Debug, Clone)]
pub struct Element {
    pub tag: String,
    pub attrs: BTreeMap<String, String>,
}

impl Element {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }
    pub fn has(&self, name: &str) -> bool {
        self.attrs.contains_key(name)
    }
}

/// The serialised DOM: every start tag, in document order, and the text.
pub struct Dom {
    pub html: String,
    pub elements: Vec<Element>,
}

impl Dom {
    /// Reads the start tags of HTML as Chromium serialises it: every
    /// attribute value in double quotes, `&`, `"`, `<`, `>` and nbsp as
    /// entities. Script and style bodies are skipped.
    pub fn parse(html: &str) -> Dom {
        let b = html.as_bytes();
        let mut elements = Vec::new();
        let mut i = 0;
        while let Some(off) = html[i..].find('<') {
            i += off + 1;
            if i >= b.len() || !b[i].is_ascii_alphabetic() {
                continue;
            }
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-') {
                i += 1;
            }
            let tag = html[start..i].to_ascii_lowercase();
            let mut attrs = BTreeMap::new();
            loop {
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'>' || b[i] == b'/' {
                    break;
                }
                let ns = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'=' | b'>' | b'/') {
                    i += 1;
                }
                let name = html[ns..i].to_ascii_lowercase();
                let mut value = String::new();
                if i < b.len() && b[i] == b'=' {
                    i += 1;
                    assert_eq!(b[i], b'"', "Chromium quotes every attribute value");
                    let end = i + 1 + html[i + 1..].find('"').expect("a closing quote");
                    value = unescape(&html[i + 1..end]);
                    i = end + 1;
                }
                attrs.insert(name, value);
            }
            let skip = matches!(tag.as_str(), "script" | "style");
            elements.push(Element { tag: tag.clone(), attrs });
            if skip {
                let close = format!("</{tag}>");
                i += html[i..].find(&close).unwrap_or(html.len() - i);
            }
        }
        Dom { html: html.to_string(), elements }
    }

    /// The elements carrying `name`, with value `value` when given.
    pub fn with<'a>(&'a self, name: &'a str, value: Option<&'a str>) -> impl Iterator<Item = &'a Element> + 'a {
        self.elements.iter().filter(move |e| e.get(name).is_some_and(|v| value.is_none_or(|w| v == w)))
    }
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
