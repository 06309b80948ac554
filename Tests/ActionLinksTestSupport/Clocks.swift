import ActionLinksDomain
import ActionLinksHTTP
import ActionLinksServer
import ActionLinksStores

extension ManualClock {
    /// A clock that stands at the middle of the current hour: for tests of hourly limits, whose
    /// window would otherwise start again between two requests of a run that crosses the hour.
    public static func midHour() -> ManualClock {
        ManualClock(start: Timestamp.now.roundedDown(to: .seconds(3600)) + .seconds(1800))
    }
}
