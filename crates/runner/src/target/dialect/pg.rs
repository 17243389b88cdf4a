//! resonate-pg (`resonate.sql`, schema 0.1.0) as `scripts/pg-server` serves
//! it. Everything else it spells canonically (scripts/pg-server/DIALECT.md,
//! section 1); one difference needs a rule:
//!
//! | difference | resonate-pg | canonical |
//! |---|---|---|
//! | `task.suspend` 200 (W1) | `{"preload": []}` (its `_rpc_data` answers 200 and 300 alike) | `{}` (T-06:37) |
//!
//! Only an *empty* `preload` of a *200* is dropped: the spec defines no
//! `preload` there (a 200 suspend carries nothing), so nothing it defines is
//! lost; a non-empty one, or one on any other status, is left for the
//! comparison to see.

use serde_json::Value;

/// Translate a response envelope to a request of `kind` in place.
pub fn response(kind: &str, env: &mut Value) {
    if kind != "task.suspend" || env["head"]["status"].as_u64() != Some(200) {
        return;
    }
    if let Some(data) = env.get_mut("data").and_then(Value::as_object_mut) {
        if data
            .get("preload")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            data.remove("preload");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn suspend(status: u64, data: Value) -> Value {
        json!({"kind": "task.suspend", "head": {"corrId": "1", "status": status, "version": "2026-04-01"}, "data": data})
    }

    #[test]
    fn an_empty_preload_of_a_200_suspend_is_dropped() {
        let mut env = suspend(200, json!({"preload": []}));
        response("task.suspend", &mut env);
        assert_eq!(env["data"], json!({}));
    }

    #[test]
    fn what_the_spec_defines_or_a_nonempty_preload_is_left_alone() {
        // The 300's preload is the spec's.
        let mut env = suspend(300, json!({"preload": []}));
        response("task.suspend", &mut env);
        assert_eq!(env["data"], json!({"preload": []}));
        // A non-empty one on a 200 is something to compare, not spelling.
        let mut env = suspend(200, json!({"preload": [{"id": "a"}]}));
        response("task.suspend", &mut env);
        assert_eq!(env["data"], json!({"preload": [{"id": "a"}]}));
        // Another kind's preload is its own.
        let mut env =
            json!({"kind": "task.acquire", "head": {"status": 200}, "data": {"preload": []}});
        response("task.acquire", &mut env);
        assert_eq!(env["data"], json!({"preload": []}));
    }
}
