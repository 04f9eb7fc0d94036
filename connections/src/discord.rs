//! Discord REST (placeholder until step 4).
