//! silt-validation
