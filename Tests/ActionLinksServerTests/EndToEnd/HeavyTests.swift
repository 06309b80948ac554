import Testing

/// The suites that load the whole machine (several servers, kills, an outage, thousands of
/// connections) run one after another, beside the light ones, so that none of them times out
/// because the others are running. The browser suite runs beside this lane: it clicks through one
/// page at a time and waits up to 30 s for each, and out of the lane it shortens the whole run by
/// about a quarter (alone it took longer than the rest of the lane together).
@Suite("Heavy suites, one at a time", .serialized, .timeLimit(.minutes(20)))
enum HeavyTests {}
