//! silt-dem
