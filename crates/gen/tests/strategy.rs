//! The proptest entry point: traces drawn through `trace_strategy` are
//! monotonic in time and well formed step by step.

use gen::{apply, trace_strategy, well_formed, GenConfig};
use model::machine::Machine;
use model::state::ServerConfig;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn drawn_traces_are_well_formed(trace in trace_strategy(GenConfig { steps: 40, ..GenConfig::default() })) {
        prop_assert_eq!(trace.len(), 40);
        let mut m = Machine::new(ServerConfig::default());
        let mut last = 0;
        for s in &trace {
            prop_assert!(s.now >= last);
            last = s.now;
            prop_assert!(well_formed(s, &m).is_ok());
            apply(&mut m, s);
        }
    }
}
