/// Levenshtein distance, ignoring case, for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased()), b = Array(b.lowercased())
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}

/// The candidate nearest to `name`, when it is within `limit` edits.
func nearest(to name: String, in candidates: some Sequence<String>, within limit: Int) -> String? {
    guard let near = candidates.min(by: { editDistance($0, name) < editDistance($1, name) }), editDistance(near, name) <= limit
    else { return nil }
    return near
}
