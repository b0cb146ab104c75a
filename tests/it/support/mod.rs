pub mod binary;
pub mod fake_apiserver;
pub mod golden;
