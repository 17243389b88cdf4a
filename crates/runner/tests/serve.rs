//! `conform serve` over real HTTP: the served model answers as the
//! in-process model does, speaks the debug surface, refuses bad input with
//! 400, materialises timeouts when asked, and each planted mutant deviates
//! from the model where its witness says.

use std::time::Duration;

use model::api::*;
use model::machine::Machine;
use model::types::{PromiseState, Tags, Value};
use model::view::StateView;
use model::wire::{decode_response, request_envelope};
use runner::serve::{spawn, ServeOptions, ServerHandle};
use serde_json::{json, Value as Json};

struct Client {
    server: ServerHandle,
    http: reqwest::blocking::Client,
}

impl Client {
    fn start(opts: ServeOptions) -> Client {
        Client {
            server: spawn(opts).expect("the server starts"),
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        }
    }

    fn model() -> Client {
        Client::start(ServeOptions::default())
    }

    /// POST a raw body; the HTTP status and the envelope.
    fn raw(&self, body: String) -> (u16, Json) {
        let res = self.http.post(self.server.url()).body(body).send().unwrap();
        let status = res.status().as_u16();
        let env: Json = res.json().unwrap();
        assert_eq!(
            env["head"]["status"], status,
            "HTTP status = envelope status"
        );
        (status, env)
    }

    fn post(&self, env: Json) -> (u16, Json) {
        self.raw(env.to_string())
    }

    /// Send a request at `now`, decode the typed response.
    fn send(&self, req: &Request, now: u64) -> Response {
        let (_, env) = self.post(request_envelope(req, "t", Some(now)));
        decode_response(req.kind(), &env).unwrap()
    }

    fn debug(&self, kind: &str, data: Json) -> (u16, Json) {
        self.post(
            json!({"kind": kind, "head": {"corrId": "d", "version": "2026-04-01"}, "data": data}),
        )
    }

    fn debug_tick(&self, now: u64) {
        let (status, _) = self.post(json!({"kind": "debug.tick",
            "head": {"corrId": "d", "version": "2026-04-01", "resonate:debug_time": now},
            "data": {"time": now}}));
        assert_eq!(status, 200);
    }

    fn snap(&self) -> Json {
        let (status, env) = self.debug("debug.snap", json!({}));
        assert_eq!(status, 200);
        env["data"].clone()
    }
}

fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const TARGET: (&str, &str) = ("resonate:target", "poll://any@workers");

fn create(id: &str, timeout_at: u64, t: &[(&str, &str)]) -> Request {
    Request::PromiseCreate(create_req(id, timeout_at, t))
}

fn create_req(id: &str, timeout_at: u64, t: &[(&str, &str)]) -> PromiseCreateReq {
    PromiseCreateReq {
        id: id.into(),
        timeout_at,
        param: Value::default(),
        tags: tags(t),
    }
}

fn get(id: &str) -> Request {
    Request::PromiseGet(PromiseGetReq { id: id.into() })
}

fn task_create(id: &str, pid: &str, ttl: u64) -> Request {
    Request::TaskCreate(TaskCreateReq {
        pid: pid.into(),
        ttl,
        action: create_req(id, 100_000, &[TARGET]),
    })
}

fn acquire(id: &str, version: u64) -> Request {
    Request::TaskAcquire(TaskAcquireReq {
        id: id.into(),
        version,
        pid: "w".into(),
        ttl: 10_000,
    })
}

fn view(m: &Machine) -> Json {
    serde_json::to_value(StateView::of(&m.state)).unwrap()
}

/// Run `steps` on a fresh in-process model and on a served one; the index
/// of the first step whose response or state differs.
fn first_divergence(opts: ServeOptions, steps: &[(Request, u64)]) -> Option<usize> {
    let c = Client::start(opts);
    let mut m = Machine::default();
    steps.iter().position(|(req, now)| {
        let want = m.apply(req, *now);
        let got = c.send(req, *now);
        got != want || c.snap() != view(&m)
    })
}

fn mutant(name: &str) -> ServeOptions {
    ServeOptions {
        mutants: vec![name.into()],
        ..ServeOptions::default()
    }
}

#[test]
fn promise_create_get_and_projection() {
    let c = Client::model();
    let Response::Promise(r) = c.send(&create("p", 100, &[]), 0) else {
        panic!()
    };
    assert_eq!(r.status, 200);
    assert_eq!(r.promise.unwrap().state, PromiseState::Pending);
    // Past its deadline a read projects the timeout and writes nothing.
    let Response::Promise(r) = c.send(&get("p"), 150) else {
        panic!()
    };
    let p = r.promise.unwrap();
    assert_eq!(
        (p.state, p.settled_at),
        (PromiseState::RejectedTimedout, Some(100))
    );
    assert_eq!(c.snap()["promises"][0]["state"], "pending");
    assert_eq!(c.send(&get("nope"), 0).status(), 404);
    let (_, env) = c.post(request_envelope(&get("nope"), "corr-9", Some(0)));
    assert_eq!(env["head"]["corrId"], "corr-9");
    assert_eq!(env["data"], "not found");
}

#[test]
fn served_and_in_process_model_agree() {
    let settle = |id: &str| {
        Request::PromiseSettle(PromiseSettleReq {
            id: id.into(),
            state: PromiseState::Resolved,
            value: Value::default(),
        })
    };
    let steps = vec![
        (create("a", 1000, &[TARGET]), 0),
        (task_create("t", "w", 5000), 1),
        (create("t.1", 2000, &[]), 2),
        (
            Request::TaskSuspend(TaskSuspendReq {
                id: "t".into(),
                version: 1,
                actions: vec![PromiseRegisterCallbackReq {
                    awaited: "t.1".into(),
                    awaiter: "t".into(),
                }],
            }),
            3,
        ),
        (settle("t.1"), 4),
        (acquire("t", 1), 5),
        (get("a"), 1500),
        (Request::TaskSearch(TaskSearchReq::default()), 6),
    ];
    assert_eq!(first_divergence(ServeOptions::default(), &steps), None);
}

#[test]
fn debug_reset_snap_tick() {
    let c = Client::model();
    let (status, env) = c.debug("debug.start", json!({}));
    assert_eq!((status, &env["data"]), (200, &json!({})));
    assert_eq!(c.debug("debug.stop", json!({})).1["data"], json!({}));
    c.send(&create("p", 100, &[TARGET]), 0);
    let snap = c.snap();
    assert_eq!(
        snap["promiseTimeouts"],
        json!([{"id": "p", "timeout": 100}])
    );
    assert_eq!(snap["tasks"][0]["state"], "pending");
    let (status, env) = c.debug("debug.tick", json!({"time": 200}));
    assert_eq!((status, &env["data"]), (200, &json!([])));
    let snap = c.snap();
    assert_eq!(snap["promises"][0]["state"], "rejected_timedout");
    assert_eq!(snap["promiseTimeouts"], json!([]));
    let (status, env) = c.debug("debug.reset", json!({}));
    assert_eq!((status, &env["data"]), (200, &json!({})));
    assert_eq!(c.snap(), view(&Machine::default()));
    // tick: time missing or invalid, or not the debug time → 400.
    assert_eq!(c.debug("debug.tick", json!({})).0, 400);
    assert_eq!(c.debug("debug.tick", json!({"time": "soon"})).0, 400);
    let (status, _) = c.post(json!({"kind": "debug.tick",
        "head": {"corrId": "d", "version": "2026-04-01", "resonate:debug_time": 5}, "data": {"time": 6}}));
    assert_eq!(status, 400);
}

#[test]
fn bad_input_is_400() {
    let c = Client::model();
    let (status, env) = c.raw("{not json".into());
    assert_eq!((status, env["kind"].as_str()), (400, Some("unknown")));
    let head = json!({"corrId": "x", "version": "2026-04-01"});
    let (status, env) = c.post(json!({"kind": "promise.frob", "head": head, "data": {}}));
    assert_eq!((status, env["kind"].as_str()), (400, Some("promise.frob")));
    let (status, env) =
        c.post(json!({"kind": "promise.create", "head": head, "data": {"id": "p"}}));
    assert_eq!(status, 400);
    assert_eq!(env["data"], "data.timeoutAt: missing field");
    assert_eq!(env["head"]["corrId"], "x");
    // Decodes, but breaks a server rule.
    let (status, _) = c.post(json!({"kind": "promise.get", "head": head, "data": {"id": ""}}));
    assert_eq!(status, 400);
    let old = json!({"corrId": "x", "version": "2020-01-01"});
    assert_eq!(
        c.post(json!({"kind": "promise.get", "head": old, "data": {"id": "p"}}))
            .0,
        400
    );
    let health = reqwest::blocking::get(format!("{}/health", c.server.url())).unwrap();
    assert_eq!(health.status().as_u16(), 200);
}

#[test]
fn materialise_mode_fires_the_timeout_on_read() {
    let opts = ServeOptions {
        materialize: true,
        ..ServeOptions::default()
    };
    let c = Client::start(opts);
    c.send(&create("p", 100, &[TARGET]), 0);
    c.send(&create("q", 100, &[TARGET]), 0);
    let Response::Promise(r) = c.send(&get("p"), 150) else {
        panic!()
    };
    assert_eq!(r.promise.unwrap().state, PromiseState::RejectedTimedout);
    let snap = c.snap();
    // p was settled for real; q, not named by the read, is still pending.
    assert_eq!(snap["promises"][0]["state"], "rejected_timedout");
    assert_eq!(snap["promises"][0]["settledAt"], 100);
    assert_eq!(snap["promises"][1]["state"], "pending");
    assert_eq!(
        snap["promiseTimeouts"],
        json!([{"id": "q", "timeout": 100}])
    );
    assert_eq!(snap["tasks"][0]["state"], "fulfilled");
}

#[test]
fn an_unknown_mutant_is_refused() {
    let err = spawn(mutant("no-such-bug")).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        err.to_string().contains("acquire-no-version-check"),
        "{err}"
    );
}

/// Every planted bug of the catalogue, served over HTTP, deviates from the
/// model exactly where its witness says: at the witness's last step.
#[test]
fn every_mutant_served_deviates_at_the_end_of_its_witness() {
    for d in deviate::all() {
        let c = Client::start(mutant(d.name));
        let mut m = Machine::default();
        let witness = (d.witness)();
        let first = witness.iter().position(|s| {
            let same = match &s.op {
                gen::Op::Request(req) => c.send(req, s.now) == m.apply(req, s.now),
                gen::Op::Tick => {
                    c.debug_tick(s.now);
                    m.tick(s.now);
                    true
                }
            };
            !same || c.snap() != view(&m)
        });
        assert_eq!(first, Some(witness.len() - 1), "{}", d.name);
    }
}
