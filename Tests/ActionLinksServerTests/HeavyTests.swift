import Testing

/// The suites that load the whole machine (several servers, kills, an outage, a browser, thousands
/// of connections) run one after another, beside the light ones, so that none of them times out
/// because the others are running.
@Suite("Heavy suites, one at a time", .serialized)
enum HeavyTests {}
