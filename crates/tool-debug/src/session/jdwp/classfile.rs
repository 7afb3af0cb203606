//! The lines with code of a compiled class, read from its class file's
//! `LineNumberTable` attributes (layout from the JVM specification,
//! chapter 4): what lets a breakpoint in a class that is not loaded yet be
//! answered at once — set (the class javac made has code there, and it is
//! the class the JVM will load) or refused (no class of the file has).
//!
//! Invariant: a class file that does not read as one gives an error, never
//! a partial list taken for the whole.

/// Why a class file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadClassFile(pub String);

struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], BadClassFile> {
        let end = self.pos + n;
        let out = self
            .data
            .get(self.pos..end)
            .ok_or_else(|| BadClassFile(format!("cut short at byte {}", self.pos)))?;
        self.pos = end;
        Ok(out)
    }

    fn u1(&mut self) -> Result<u8, BadClassFile> {
        Ok(self.take(1)?[0])
    }

    fn u2(&mut self) -> Result<usize, BadClassFile> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_be_bytes([b[0], b[1]])))
    }

    fn u4(&mut self) -> Result<usize, BadClassFile> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

/// Every line of the class's methods that has code, sorted, each once.
pub fn code_lines(data: &[u8]) -> Result<Vec<u32>, BadClassFile> {
    let mut r = Bytes { data, pos: 0 };
    if r.u4()? != 0xCAFE_BABE {
        return Err(BadClassFile("no class file magic".into()));
    }
    r.take(4)?;
    let count = r.u2()?;
    // The UTF-8 constants, by index: attribute names are among them.
    let mut utf8: Vec<Option<&[u8]>> = vec![None; count.max(1)];
    let mut i = 1;
    while i < count {
        let tag = r.u1()?;
        let size = match tag {
            1 => {
                let n = r.u2()?;
                utf8[i] = Some(r.take(n)?);
                0
            }
            7 | 8 | 16 | 19 | 20 => 2,
            15 => 3,
            3 | 4 | 9 | 10 | 11 | 12 | 17 | 18 => 4,
            5 | 6 => 8,
            other => return Err(BadClassFile(format!("unknown constant tag {other}"))),
        };
        r.take(size)?;
        // A long or a double takes two entries.
        i += if matches!(tag, 5 | 6) { 2 } else { 1 };
    }
    let name = |index: usize| utf8.get(index).copied().flatten().unwrap_or_default();
    r.take(6)?;
    let interfaces = r.u2()?;
    r.take(interfaces * 2)?;
    let fields = r.u2()?;
    for _ in 0..fields {
        r.take(6)?;
        skip_attributes(&mut r)?;
    }
    let mut lines = Vec::new();
    let methods = r.u2()?;
    for _ in 0..methods {
        r.take(6)?;
        for _ in 0..r.u2()? {
            let attribute = name(r.u2()?);
            let length = r.u4()?;
            let body = r.take(length)?;
            if attribute == b"Code" {
                lines.extend(code_attribute_lines(body, &name)?);
            }
        }
    }
    lines.sort_unstable();
    lines.dedup();
    Ok(lines)
}

fn skip_attributes(r: &mut Bytes<'_>) -> Result<(), BadClassFile> {
    for _ in 0..r.u2()? {
        r.take(2)?;
        let n = r.u4()?;
        r.take(n)?;
    }
    Ok(())
}

/// The lines of a `Code` attribute's `LineNumberTable`s.
fn code_attribute_lines<'a>(
    body: &[u8],
    name: &dyn Fn(usize) -> &'a [u8],
) -> Result<Vec<u32>, BadClassFile> {
    let mut r = Bytes { data: body, pos: 0 };
    r.take(4)?;
    let code = r.u4()?;
    r.take(code)?;
    let handlers = r.u2()?;
    r.take(handlers * 8)?;
    let mut lines = Vec::new();
    for _ in 0..r.u2()? {
        let attribute = name(r.u2()?);
        let length = r.u4()?;
        let mut table = Bytes {
            data: r.take(length)?,
            pos: 0,
        };
        if attribute == b"LineNumberTable" {
            for _ in 0..table.u2()? {
                table.take(2)?;
                lines.push(table.u2()? as u32);
            }
        }
    }
    Ok(lines)
}
