//! The handlers, one file per concern.

pub(crate) mod assets;
pub(crate) mod events;
pub(crate) mod lineage;
pub(crate) mod ops;
pub(crate) mod page;
pub(crate) mod questions;
pub(crate) mod retention;
pub(crate) mod rules;
