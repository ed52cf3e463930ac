//! silt-report
