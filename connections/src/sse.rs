//! SSE
