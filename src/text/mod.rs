//! Pure text functions and small incremental scanners shared by every stage: length
//! metrics, the Markdown scanner (fences, inline code), the block chunker and the
//! platform splitter.

pub mod block;
pub mod chunker;
pub mod cut;
pub mod markdown;
pub mod metric;
pub mod splitter;
