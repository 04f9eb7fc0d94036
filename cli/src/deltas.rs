//! A reply read as it is streamed: UTF-8 text from a reader, handed out as deltas of `k`
//! characters while holding only a window of it (a block of the file plus one delta), so a
//! 100 MB reply costs no 100 MB here.

use std::io::Read;

use crate::CliError;

/// Bytes read from the file at a time.
const BLOCK: usize = 64 * 1024;

/// Hands out the text of a reader as deltas of `k` characters (the last may be shorter).
pub(crate) struct DeltaReader<R> {
    reader: R,
    /// What the errors call the input (a path, or "standard input").
    shown: String,
    k: usize,
    /// Validated text not handed out yet starts at `next`.
    window: String,
    next: usize,
    /// Bytes read but not yet valid: the start of a character cut by the end of a block.
    partial: Vec<u8>,
    /// Bytes of the input before `window`.
    offset: u64,
    at_end: bool,
    block: Vec<u8>,
}

impl<R: Read> DeltaReader<R> {
    /// Deltas of `k >= 1` characters of `reader`'s text.
    pub(crate) fn new(reader: R, shown: &str, k: usize) -> DeltaReader<R> {
        DeltaReader {
            reader,
            shown: shown.to_owned(),
            k: k.max(1),
            window: String::new(),
            next: 0,
            partial: Vec::new(),
            offset: 0,
            at_end: false,
            block: vec![0; BLOCK],
        }
    }

    /// The next delta, or `None` at the end. Input that is not UTF-8 is an error naming the
    /// offset of the first bad byte.
    pub(crate) fn next_delta(&mut self) -> Result<Option<&str>, CliError> {
        loop {
            let rest = &self.window[self.next..];
            // Complete when it holds `k` characters, or everything that is left.
            let end = match rest.char_indices().nth(self.k) {
                Some((i, _)) => Some(i),
                None if self.at_end => Some(rest.len()),
                None => None,
            };
            if let Some(end) = end {
                if end == 0 {
                    return Ok(None);
                }
                let start = self.next;
                self.next += end;
                return Ok(Some(&self.window[start..self.next]));
            }
            self.fill()?;
        }
    }

    /// Drops what was handed out and reads the next block.
    fn fill(&mut self) -> Result<(), CliError> {
        self.offset += self.next as u64;
        self.window.drain(..self.next);
        self.next = 0;
        let n = loop {
            match self.reader.read(&mut self.block) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(CliError::runtime(format!(
                        "cannot read {}: {e}",
                        self.shown
                    )));
                }
            }
        };
        if n == 0 {
            self.at_end = true;
            if !self.partial.is_empty() {
                return Err(self.not_utf8(0));
            }
            return Ok(());
        }
        self.partial.extend_from_slice(&self.block[..n]);
        let valid = match std::str::from_utf8(&self.partial) {
            Ok(text) => text.len(),
            // An error with no length is a character cut by the block's end: keep it.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => return Err(self.not_utf8(e.valid_up_to())),
        };
        let text = std::str::from_utf8(&self.partial[..valid]).expect("validated");
        self.window.push_str(text);
        self.partial.drain(..valid);
        Ok(())
    }

    /// The error for a bad byte `at` bytes into the unvalidated part.
    fn not_utf8(&self, at: usize) -> CliError {
        let offset = self.offset + self.window.len() as u64 + at as u64;
        CliError::runtime(format!(
            "{} is not valid UTF-8 (first bad byte at offset {offset})",
            self.shown
        ))
    }
}

/// Reads all of `reader` as UTF-8 without keeping it, to report bad input before any output.
pub(crate) fn check_utf8(reader: impl Read, shown: &str) -> Result<(), CliError> {
    let mut deltas = DeltaReader::new(reader, shown, BLOCK);
    while deltas.next_delta()?.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `n` bytes per read, to cut characters across blocks.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn deltas(bytes: &[u8], per_read: usize, k: usize) -> Result<Vec<String>, CliError> {
        let mut reader = DeltaReader::new(Trickle(bytes, per_read), "input", k);
        let mut out = Vec::new();
        while let Some(d) = reader.next_delta()? {
            out.push(d.to_owned());
        }
        Ok(out)
    }

    #[test]
    fn deltas_are_k_characters_whatever_the_reads() {
        let text = "héllo 👩\u{200d}👧 中文 wörld";
        let expected: Vec<String> = crate::text::char_deltas(text, 3)
            .map(str::to_owned)
            .collect();
        for per_read in [1, 2, 3, 5, 64] {
            assert_eq!(deltas(text.as_bytes(), per_read, 3).unwrap(), expected);
        }
        assert!(deltas(b"", 1, 4).unwrap().is_empty());
    }

    #[test]
    fn bad_bytes_are_reported_with_their_offset() {
        for per_read in [1, 2, 7] {
            let err = deltas(b"caf\xe9 au lait", per_read, 2).unwrap_err();
            assert!(err.message.contains("offset 3"), "{}", err.message);
            // A character cut by the end of the input is bad too.
            let err = deltas("abé".as_bytes().split_last().unwrap().1, per_read, 2);
            assert!(err.unwrap_err().message.contains("offset 2"));
        }
    }
}
