import ActionLinksFixtures

/// The fixtures of these tests: `Fixtures/` beside this file.
let Fixtures = FixtureFiles()
