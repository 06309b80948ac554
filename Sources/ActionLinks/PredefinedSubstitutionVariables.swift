/// Apple's predefined `$(name)` variables.
///
/// Apple documents each as a list of alternatives (for example `$(digit)` is `0`, …, `9`), and a variable matches
/// exactly one alternative, so the ASCII classes match exactly one character. `$(region)` and `$(lang)` point at
/// Foundation's `isoRegionCodes` / `isoLanguageCodes`; we ship the ISO lists themselves so matching never depends
/// on the host's Foundation.
enum PredefinedSubstitutionVariables {
    /// The single-character classes; raw values are the variable names.
    enum CharacterClass: String, Sendable, Hashable, CaseIterable {
        case alpha, upper, lower, alnum, digit, xdigit

        /// With case folding a class behaves like its alternatives compared case-insensitively (`$(upper)` takes `a`).
        func contains(_ scalar: Unicode.Scalar, caseSensitive: Bool) -> Bool {
            if strictlyContains(scalar) { return true }
            guard !caseSensitive, scalar.isASCII else { return false }
            let value = scalar.value
            let swapped: UInt32 =
                (65...90).contains(value) ? value + 32 : (97...122).contains(value) ? value - 32 : value
            return strictlyContains(Unicode.Scalar(swapped)!)
        }

        private func strictlyContains(_ scalar: Unicode.Scalar) -> Bool {
            let isUpper = ("A"..."Z").contains(scalar)
            let isLower = ("a"..."z").contains(scalar)
            let isDigit = ("0"..."9").contains(scalar)
            switch self {
            case .alpha: return isUpper || isLower
            case .upper: return isUpper
            case .lower: return isLower
            case .alnum: return isUpper || isLower || isDigit
            case .digit: return isDigit
            case .xdigit: return isDigit || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
            }
        }
    }

    /// Alternatives for the list-valued predefined variables, or nil when `name` is not one of them.
    static func codes(named name: String) -> [String]? {
        switch name {
        case "region": regionCodes
        case "lang": languageCodes
        default: nil
        }
    }

    /// True for every predefined name; validation uses it to warn when a custom variable shadows one.
    static func isPredefined(_ name: String) -> Bool {
        CharacterClass(rawValue: name) != nil || codes(named: name) != nil
    }

    /// The 249 officially assigned ISO 3166-1 alpha-2 codes. Foundation's `isoRegionCodes` also carries CLDR-only
    /// codes (AC, CP, CQ, DG, EA, IC, TA, XK, EU, EZ, UN, QO and numeric regions), which are not ISO assignments.
    static let regionCodes: [String] = """
        AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY \
        BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK \
        FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR \
        IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK \
        ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM \
        PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF \
        TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
        """.split(separator: " ").map(String.init)

    /// The 183 current ISO 639-1 two-letter codes (deprecated `bh` and `sh` excluded). Foundation's two-letter
    /// `isoLanguageCodes` omit `tl`, which CLDR folds into `fil`; ISO still assigns it, so it stays here.
    static let languageCodes: [String] = """
        aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el \
        en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it \
        iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt \
        my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl \
        sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo \
        za zh zu
        """.split(separator: " ").map(String.init)
}
