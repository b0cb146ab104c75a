//! Every integration test, in one binary: the binary under test (`kubectl-deltas`) run as a child
//! process against the in-process fake API server (`support`), the library's informer machinery
//! driven directly, and the bundled recordings and goldens checked byte for byte.
//!
//! All tests run as threads of this one process: a test must not change the environment, the
//! current directory or signal dispositions; what a test needs of those goes to the child it
//! starts (see `support::binary`).

mod support;

mod bad_inputs;
mod bundled_recordings;
mod cli;
mod client_go_cli;
mod cluster_access;
mod compare_cli;
mod connection_flags;
mod controller_bounds;
mod controller_cli;
mod controller_priority_cli;
mod controller_record;
mod credentials;
mod discovery_cache;
mod fake_apiserver;
mod first_look_cli;
mod handler_stops;
mod handlers_cli;
mod headers_cli;
mod hostile_objects;
mod html_output;
mod html_story;
mod index_cli;
mod jsonl_recipes;
mod key_globs;
mod kube_controller_cli;
mod list_decoding;
mod metadata_only;
mod narrowing_cli;
mod one_object_cli;
mod other_stores;
mod other_stores_cli;
mod output_files;
mod plain_fifo_cli;
mod plugin;
mod real_controllers;
mod reconcile_rows;
mod recording;
mod recording_queues;
mod reflector;
mod replay_cli;
mod replay_keeps;
mod replay_resyncs;
mod replay_several;
mod replay_window;
mod replay_with;
mod stopping_cli;
mod tcp_nodelay;
mod usage_cli;
mod verify_cli;
mod watch_cli;
mod watch_fifo;
mod watch_outputs;
mod watch_scenario;
mod who_changed;
