//! silt-io
