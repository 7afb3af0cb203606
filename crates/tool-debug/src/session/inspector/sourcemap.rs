//! Source maps (version 3) as a TypeScript build writes them (`X.js` beside
//! `X.js.map`): a breakpoint in a `.ts` line goes to the generated line
//! that line became, and a paused `.js` place reads as its `.ts` place.
//!
//! Invariants: maps are looked for under the program's folder only (not
//! `node_modules`), at most [`MAP_CAP`] of them, read once per session; a
//! map that does not parse is skipped, never guessed at.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Maps read for one session at most.
const MAP_CAP: usize = 2000;

/// One mapped position: generated (0-based line, column) to original
/// (source index, 0-based line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    gen_line: u32,
    gen_col: u32,
    source: usize,
    src_line: u32,
}

/// One `.js.map`: the script it maps and its segments.
#[derive(Debug, Clone)]
pub struct SourceMap {
    /// The generated script.
    pub script: PathBuf,
    pub sources: Vec<PathBuf>,
    segments: Vec<Segment>,
}

impl SourceMap {
    /// Read the map at `map_path` (its script is `file`, or the map's name
    /// without `.map`).
    pub fn parse(text: &str, map_path: &Path) -> Option<SourceMap> {
        let v: serde_json::Value = serde_json::from_str(text).ok()?;
        let dir = map_path.parent()?;
        let root = v.get("sourceRoot").and_then(|r| r.as_str()).unwrap_or("");
        let sources = v
            .get("sources")?
            .as_array()?
            .iter()
            .map(|s| normalized(&dir.join(root).join(s.as_str().unwrap_or(""))))
            .collect();
        let script = match v.get("file").and_then(|f| f.as_str()) {
            Some(f) => normalized(&dir.join(f)),
            None => normalized(&map_path.with_extension("")),
        };
        let segments = decode(v.get("mappings")?.as_str()?)?;
        Some(SourceMap {
            script,
            sources,
            segments,
        })
    }

    /// The generated line (0-based) of `source`'s `line` (0-based): the
    /// first segment on it, else on the next line that has one. With the
    /// original line it maps from.
    pub fn generated(&self, source: &Path, line: u32) -> Option<(u32, u32)> {
        let index = self.sources.iter().position(|s| s == source)?;
        self.segments
            .iter()
            .filter(|s| s.source == index && s.src_line >= line)
            .min_by_key(|s| (s.src_line, s.gen_line, s.gen_col))
            .map(|s| (s.gen_line, s.src_line))
    }

    /// The original place (source, 0-based line) of a generated one.
    pub fn original(&self, gen_line: u32, gen_col: u32) -> Option<(PathBuf, u32)> {
        let on_line = self.segments.iter().filter(|s| s.gen_line == gen_line);
        let s = on_line
            .clone()
            .filter(|s| s.gen_col <= gen_col)
            .max_by_key(|s| s.gen_col)
            .or_else(|| on_line.min_by_key(|s| s.gen_col))?;
        Some((self.sources.get(s.source)?.clone(), s.src_line))
    }
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn normalized(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The `mappings` string's segments (base64 VLQ, relative fields).
fn decode(mappings: &str) -> Option<Vec<Segment>> {
    let mut out = Vec::new();
    let (mut source, mut src_line) = (0i64, 0i64);
    for (gen_line, line) in mappings.split(';').enumerate() {
        let mut gen_col = 0i64;
        for segment in line.split(',').filter(|s| !s.is_empty()) {
            let fields = vlq(segment)?;
            gen_col += fields.first()?;
            if fields.len() >= 4 {
                source += fields[1];
                src_line += fields[2];
                out.push(Segment {
                    gen_line: u32::try_from(gen_line).ok()?,
                    gen_col: u32::try_from(gen_col).ok()?,
                    source: usize::try_from(source).ok()?,
                    src_line: u32::try_from(src_line).ok()?,
                });
            }
        }
    }
    Some(out)
}

fn vlq(segment: &str) -> Option<Vec<i64>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut value, mut shift) = (0i64, 0u32);
    for b in segment.bytes() {
        let digit = ALPHABET.iter().position(|a| *a == b)? as i64;
        value += (digit & 31) << shift;
        if digit & 32 != 0 {
            shift += 5;
            continue;
        }
        let negative = value & 1 == 1;
        let magnitude = value >> 1;
        out.push(if negative { -magnitude } else { magnitude });
        value = 0;
        shift = 0;
    }
    Some(out)
}

/// The maps under `dir` (not `node_modules`), by script and by source.
#[derive(Debug, Default)]
pub struct MapIndex {
    maps: Vec<SourceMap>,
    by_script: HashMap<PathBuf, usize>,
}

impl MapIndex {
    /// Every `*.js.map` under `dir`, at most [`MAP_CAP`].
    pub fn scan(dir: &Path) -> MapIndex {
        let mut index = MapIndex::default();
        let mut pending = vec![dir.to_path_buf()];
        let mut seen = 0;
        while let Some(d) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                let name = e.file_name();
                let name = name.to_string_lossy();
                if p.is_dir() {
                    if name != "node_modules" && !name.starts_with('.') {
                        pending.push(p);
                    }
                } else if name.ends_with(".js.map")
                    || name.ends_with(".mjs.map")
                    || name.ends_with(".cjs.map")
                {
                    seen += 1;
                    if seen > MAP_CAP {
                        return index;
                    }
                    let p = p.canonicalize().unwrap_or(p);
                    if let Some(m) = std::fs::read_to_string(&p)
                        .ok()
                        .and_then(|t| SourceMap::parse(&t, &p))
                    {
                        index.by_script.insert(m.script.clone(), index.maps.len());
                        index.maps.push(m);
                    }
                }
            }
        }
        index
    }

    /// The map whose sources include `source`.
    pub fn for_source(&self, source: &Path) -> Option<&SourceMap> {
        self.maps
            .iter()
            .find(|m| m.sources.iter().any(|s| s == source))
    }

    /// The map of the generated `script`.
    pub fn for_script(&self, script: &Path) -> Option<&SourceMap> {
        self.by_script.get(script).map(|i| &self.maps[*i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `tsc` wrote for tests/fixtures/debug/typescript/src/avg.ts.
    const MAP: &str = r#"{"version":3,"file":"avg.js","sourceRoot":"","sources":["../src/avg.ts"],"names":[],"mappings":";AAMA,SAAS,IAAI,CAAC,EAAY;IACxB,IAAI,KAAK,GAAW,CAAC,CAAC;IACtB,KAAK,IAAI,CAAC,GAAG,CAAC,EAAE,CAAC,GAAG,EAAE,CAAC,MAAM,EAAE,CAAC,EAAE,EAAE,CAAC;QACnC,KAAK,IAAI,EAAE,CAAC,CAAC,CAAC,CAAC;IACjB,CAAC;IACD,OAAO,KAAK,GAAG,EAAE,CAAC,MAAM,CAAC;AAC3B,CAAC;AAED,MAAM,MAAM,GAAW,EAAE,KAAK,EAAE,KAAK,EAAE,MAAM,EAAE,CAAC,CAAC,EAAE,CAAC,EAAE,EAAE,EAAE,EAAE,EAAE,EAAE,EAAE,EAAE,CAAC,EAAE,CAAC;AACxE,OAAO,CAAC,GAAG,CAAC,GAAG,MAAM,CAAC,KAAK,KAAK,IAAI,CAAC,MAAM,CAAC,MAAM,CAAC,EAAE,CAAC,CAAC"}"#;

    #[test]
    fn typescript_lines_map_both_ways() {
        let m = SourceMap::parse(MAP, Path::new("/w/dist/avg.js.map")).unwrap();
        assert_eq!(m.script, Path::new("/w/dist/avg.js"));
        let ts = Path::new("/w/src/avg.ts");
        assert_eq!(m.sources, [ts]);
        // avg.ts:10 `total += xs[i];` is avg.js:5 (1-based).
        assert_eq!(m.generated(ts, 9), Some((4, 9)));
        assert_eq!(m.original(4, 8), Some((ts.to_path_buf(), 9)));
        // A line without code (the interface) goes to the next one with.
        assert_eq!(m.generated(ts, 2), Some((1, 6)));
        assert_eq!(m.generated(Path::new("/w/src/other.ts"), 1), None);
        assert_eq!(vlq("gB"), Some(vec![16]));
        assert_eq!(vlq("D"), Some(vec![-1]));
    }
}
