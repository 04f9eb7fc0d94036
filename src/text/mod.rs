//! Pure text functions and small incremental scanners shared by every stage: length
//! metrics, the Markdown scanner (fences, inline code), the block chunker and the
//! platform splitter.

pub(crate) mod block;
pub(crate) mod chunker;
pub(crate) mod cut;
pub(crate) mod dedent;
pub(crate) mod limits;
pub(crate) mod markdown;
pub(crate) mod metric;
pub(crate) mod splitter;
