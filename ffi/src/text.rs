//! The text core over a buffer: split a whole text to a platform's limit, or chunk it as a
//! stream would be, with results as views into one owned result object.

use std::ffi::c_char;

use replystream::{Block, BlockChunker, PlatformSplitter};

use crate::args::{ArgError, str_arg};
use crate::handle::{code_of, constructor, free_handle};
use crate::options::{config_from, replystream_options};
use crate::result::replystream_result::{self, *};
use crate::types::replystream_str;

/// One piece of a text, in a `replystream_blocks` result. Views point into the result and
/// stay valid until `replystream_blocks_free`.
///
/// Rebuilding the input: over all pieces in order, `lead`, then the input's bytes
/// `source_start..source_end`, then `sep`, concatenated, give back the input exactly, byte
/// for byte (leading blank lines, CR LF and trailing whitespace included). Where `dedent` is
/// 0 those bytes are also `text.ptr[source_in_text_start..source_in_text_end]`. A text of
/// only whitespace has no pieces.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_block {
    /// What to display: the source text of the piece, plus synthetic text at an edge where
    /// code, a table or an inline span was cut (see `fence_reopened`, `indent_reopened`,
    /// `fence_closed`, `table_header_repeated`, `spans_reopened`, `spans_closed`).
    pub text: replystream_str,
    /// The source text between this piece and the next (e.g. "\n\n", " ", or empty after a
    /// hard cut).
    pub sep: replystream_str,
    /// The byte offset in the input where the piece's source text starts.
    pub source_start: usize,
    /// The byte offset in the input where it ends (exclusive).
    pub source_end: usize,
    /// The piece starts with a synthetic line reopening a fence cut before it.
    pub fence_reopened: bool,
    /// The piece ends with a synthetic line closing a fence cut after it.
    pub fence_closed: bool,
    /// Whitespace before the piece's source that no earlier `sep` holds: the input's leading
    /// whitespace on the first piece (and, for `replystream_chunk`, after a flush); usually
    /// empty.
    pub lead: replystream_str,
    /// The piece starts with 4 synthetic spaces: it continues an indented code line cut in
    /// its middle (in a block quote, after the quote's `>` markers and a space).
    pub indent_reopened: bool,
    /// The byte offset in `text` where the piece's source text starts (after a synthetic
    /// reopening fence line or the 4 synthetic spaces).
    pub source_in_text_start: usize,
    /// The byte offset in `text` where it ends (exclusive; before a synthetic closing fence
    /// line). `source_in_text_end - source_in_text_start == source_end - source_start`
    /// where `dedent` is 0.
    pub source_in_text_end: usize,
    /// The piece starts with a table's header row and delimiter row repeated (synthetic, up
    /// to `source_in_text_start`): it goes on with the rows of a table cut between two rows.
    pub table_header_repeated: bool,
    /// The piece starts with synthetic inline delimiters (outermost first, before
    /// `source_in_text_start`): the piece before was cut inside an inline code span longer
    /// than a piece, or inside emphasis, strong emphasis or strikethrough, opened again here.
    pub spans_reopened: bool,
    /// The piece ends with synthetic inline delimiters (innermost first, after
    /// `source_in_text_end`) closing what the cut fell inside.
    pub spans_closed: bool,
    /// Columns of indentation taken off the lines of `text` (0: none): the piece starts
    /// inside a list item's code (or text) 4 or more columns deep and is shown as the item's
    /// content reads. Every line of `text` is its source line with up to that many leading
    /// columns of spaces and tabs removed, fewer from a line that left the item on (it and
    /// the lines after it lose at most its own indentation); the synthetic lines alike.
    pub dedent: usize,
    /// Quote markers kept at the start of each line before the `dedent` columns are taken
    /// off (0: they are a line's leading columns): the piece starts inside the fence of a
    /// list item in a block quote, 4 or more columns past the `>`, and is shown as the
    /// item's content reads in the quote. A line without those markers has left the quote,
    /// and from it on nothing is taken off.
    pub dedent_quotes: usize,
}

/// The pieces of a text from `replystream_split` or `replystream_chunk`. Opaque; read with
/// `replystream_blocks_count` and `replystream_blocks_get`, free with `replystream_blocks_free`
/// (every view into it becomes invalid then). Read-only, so it may be read from several
/// threads at once.
pub struct replystream_blocks {
    /// The pieces, their strings NUL-terminated; the views point here (only read by tests:
    /// it owns the text the views show).
    #[cfg_attr(not(test), expect(dead_code))]
    blocks: Vec<Block>,
    views: Vec<replystream_block>,
}

impl replystream_blocks {
    fn new(mut blocks: Vec<Block>) -> replystream_blocks {
        // Taken before the NULs go in (`source_in_text` looks at the text's end).
        let shown: Vec<_> = blocks.iter().map(Block::source_in_text).collect();
        for block in &mut blocks {
            block.text.push('\0');
            block.sep.push('\0');
            block.lead.push('\0');
        }
        let views = blocks
            .iter()
            .zip(shown)
            .map(|(b, shown)| replystream_block {
                text: replystream_str::of_nul_terminated(&b.text),
                sep: replystream_str::of_nul_terminated(&b.sep),
                source_start: b.source.start,
                source_end: b.source.end,
                fence_reopened: b.fence_reopened,
                fence_closed: b.fence_closed,
                lead: replystream_str::of_nul_terminated(&b.lead),
                indent_reopened: b.indent_reopened,
                source_in_text_start: shown.start,
                source_in_text_end: shown.end,
                table_header_repeated: b.table_header_repeated,
                spans_reopened: b.spans_reopened,
                spans_closed: b.spans_closed,
                dedent: b.dedent,
                dedent_quotes: b.dedent_quotes,
            })
            .collect();
        replystream_blocks { blocks, views }
    }
}

/// Which text operation to run.
#[derive(Clone, Copy)]
enum Cut {
    Split,
    Chunk,
}

/// The shared body of split and chunk.
///
/// # Safety
/// As for `replystream_split`.
unsafe fn cut(
    cut: Cut,
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
    text: *const c_char,
    len: usize,
    out: *mut *mut replystream_blocks,
) -> replystream_result {
    constructor(|| {
        if out.is_null() {
            return Err(ArgError::new(REPLYSTREAM_NULL_POINTER, "out is NULL"));
        }
        // SAFETY: `out` is non-NULL and writable (caller contract).
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: caller contract.
        let mut config = unsafe { config_from(channel, channel_len, options) }?;
        // A format or table mode the channel cannot use is refused as the engine refuses it,
        // though the pieces go back as Markdown and the limit counts the Markdown.
        let (format, channel) = (config.format, config.channel);
        if !format.usable_on(channel) {
            return Err(ArgError::new(
                REPLYSTREAM_INVALID_CONFIG,
                format!(
                    "format {} cannot be shown on channel {channel}",
                    format.name()
                ),
            ));
        }
        if config.table_mode == Some(replystream::TableMode::Native) && !format.has_tables() {
            return Err(ArgError::new(
                REPLYSTREAM_INVALID_CONFIG,
                format!(
                    "table_mode native needs a format that shows tables; {} shows none",
                    format.name()
                ),
            ));
        }
        config.format = replystream::Format::Markdown;
        let resolved = config
            .validate()
            .map_err(|error| ArgError::new(code_of(&error), error.to_string()))?;
        // SAFETY: caller contract.
        let text = unsafe { str_arg(text, len, "text") }?.unwrap_or("");
        let blocks = match cut {
            Cut::Split => PlatformSplitter::new(resolved.splitter())
                .map_err(|error| ArgError::new(code_of(&error), error.to_string()))?
                .split(text),
            Cut::Chunk => {
                let mut chunker = BlockChunker::new(resolved.chunker())
                    .map_err(|error| ArgError::new(code_of(&error), error.to_string()))?;
                let mut blocks = Vec::new();
                chunker.push(text, &mut blocks);
                chunker.flush(&mut blocks);
                blocks
            }
        };
        let result = Box::new(replystream_blocks::new(blocks));
        // SAFETY: checked non-NULL above.
        unsafe { out.write(Box::into_raw(result)) };
        Ok(())
    })
}

/// Splits a whole text (a final reply, a tool result) into pieces that fit the channel's
/// text limit, counted in its metric, with its line cap; in newline chunk mode, at every
/// paragraph first. Pieces never break a code fence without closing and reopening it, never
/// split a grapheme cluster, and with their leads and separators give back the text exactly
/// (see `replystream_block`).
///
/// `channel` and `options` configure it as for `replystream_engine_new` (text limit, metric,
/// max lines, chunk mode, and the response prefix's room). `text`/`len` is UTF-8, read during
/// the call only (NULL with 0 is the empty text). `*out` receives the result (NULL on error).
///
/// Returns `REPLYSTREAM_OK`, or `REPLYSTREAM_NULL_POINTER` (`out` NULL, or a NULL pointer with
/// a non-zero length), `REPLYSTREAM_INVALID_ARGUMENT` (a length above `PTRDIFF_MAX`),
/// `REPLYSTREAM_INVALID_UTF8` (the text or channel name), `REPLYSTREAM_UNKNOWN_CHANNEL`,
/// `REPLYSTREAM_INVALID_CONFIG` (e.g. a text limit below `replystream_min_limit`, too small
/// to close and reopen a code fence; the detail names the field), `REPLYSTREAM_POISONED`
/// (options), `REPLYSTREAM_PANIC`; `replystream_new_error` tells why.
///
/// # Safety
/// `channel` and `text` are NULL or point to their lengths of readable bytes; `options` is
/// NULL or a live options handle not being written; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_split(
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
    text: *const c_char,
    len: usize,
    out: *mut *mut replystream_blocks,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { cut(Cut::Split, channel, channel_len, options, text, len, out) }
}

/// Chunks a text as the streaming chunker would (the blocks do not depend on how a stream is
/// cut into deltas): blocks of chunk min to max units, cut at the preferred breaks, with the
/// same guarantees as `replystream_split`. Arguments, results and codes as for
/// `replystream_split` (chunk min, max, break preference, chunk mode and metric apply).
///
/// # Safety
/// As for `replystream_split`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_chunk(
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
    text: *const c_char,
    len: usize,
    out: *mut *mut replystream_blocks,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { cut(Cut::Chunk, channel, channel_len, options, text, len, out) }
}

/// How many pieces the result holds (0 for NULL).
///
/// # Safety
/// `blocks` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_blocks_count(blocks: *const replystream_blocks) -> usize {
    // SAFETY: caller contract.
    unsafe { blocks.as_ref() }.map_or(0, |b| b.views.len())
}

/// The piece number `index` (from 0), or NULL when `index` is not below the count (or
/// `blocks` is NULL). The pieces are contiguous: `replystream_blocks_get(b, 0)[i]` is piece
/// `i`. Valid until `replystream_blocks_free`.
///
/// # Safety
/// `blocks` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_blocks_get(
    blocks: *const replystream_blocks,
    index: usize,
) -> *const replystream_block {
    // SAFETY: caller contract.
    unsafe { blocks.as_ref() }
        .and_then(|b| b.views.get(index))
        .map_or(std::ptr::null(), |v| v as *const replystream_block)
}

/// Frees a result and every view into it. NULL is allowed and does nothing.
///
/// # Safety
/// `blocks` is NULL or a result not freed yet and not in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_blocks_free(blocks: *mut replystream_blocks) {
    // SAFETY: caller contract (a result from split or chunk, freed once).
    unsafe { free_handle(blocks) }
}

#[cfg(test)]
impl replystream_blocks {
    pub(crate) fn block_texts(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().map(|b| b.text.trim_end_matches('\0'))
    }
}
