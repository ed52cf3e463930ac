//! silt-core
