import ArgumentParser
import Foundation

/// `--json`: machine-readable output instead of text for people.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON (sorted keys) instead of text.")
    var json = false
}

/// Reads the inputs, where `-` stands for the lines of standard input.
func expandInputs(_ arguments: [String]) -> [String] {
    var inputs: [String] = []
    for argument in arguments {
        guard argument == "-" else {
            inputs.append(argument)
            continue
        }
        while let line = readLine(strippingNewline: true) {
            let trimmed = line.hasSuffix("\r") ? String(line.dropLast()) : line
            if !trimmed.allSatisfy(\.isWhitespace) { inputs.append(trimmed) }
        }
    }
    return inputs
}

/// Prints `value` as JSON with sorted keys, the form the tests and scripts rely on.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Writes a line to standard error.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
