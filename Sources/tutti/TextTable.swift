/// A plain-text table laid out to a terminal's width: every column as wide as its content, the least
/// important columns left out and long names shortened with an ellipsis when the table would not fit,
/// columns kept aligned whatever is cut. Pure: the same input gives the same text.
///
/// Layout for a width W (`lines(width:)`): each column's natural width is that of its widest cell or header
/// line. While the table would be wider than W even with every shortenable column at its minimum, the
/// droppable column with the lowest `priority` is left out. Then the widest shortenable columns give up one
/// character at a time, down to their minimum, until the table fits. A table whose fixed columns alone are
/// wider than W is printed wider. With no width (`--wide`), nothing is dropped or shortened.
struct TextTable: Equatable {
    enum Alignment: Equatable { case left, right }

    /// Where a cell too long for its column loses characters (replaced by one `…`).
    enum Truncation: Equatable {
        /// Never shortened.
        case none
        /// Keeps the start.
        case end
        /// Keeps the start and the end (for `source→destination`).
        case middle
    }

    struct Column: Equatable {
        var title: String
        /// The second header line (e.g. "ms", "pkts"); empty for none.
        var unit: String = ""
        var alignment: Alignment = .left
        var truncation: Truncation = .none
        /// The narrowest a shortenable column becomes (its natural width, if that is less).
        var minimumWidth: Int = 1
        /// nil: always shown. Otherwise the column may be left out, lowest priority first.
        var priority: Int?
    }

    struct Row: Equatable {
        var cells: [String]
        /// Lines printed under the row, indented past the first column (cut at the width, never wrapped).
        var notes: [String] = []
    }

    var columns: [Column]
    var rows: [Row]
    /// The only line printed when there are no rows (none: the header alone).
    var emptyText: String = ""

    /// Columns between adjacent cells.
    static let separator = " "
    static let ellipsis: Character = "…"

    /// The table's lines, laid out for `width` columns (nil: every column, untruncated), then a last line
    /// counting the columns left out, if any.
    func lines(width: Int?) -> [String] {
        for row in rows { precondition(row.cells.count == columns.count, "a row needs one cell per column") }
        if rows.isEmpty, !emptyText.isEmpty { return [emptyText] }
        let natural = columns.indices.map { index in
            rows.reduce(max(Self.displayWidth(columns[index].title), Self.displayWidth(columns[index].unit))) {
                max($0, Self.displayWidth($1.cells[index]))
            }
        }
        let minimum = columns.indices.map { index in
            columns[index].truncation == .none ? natural[index] : min(natural[index], max(1, columns[index].minimumWidth))
        }
        var shown = Array(columns.indices)
        var widths = natural
        if let width {
            func total(_ candidate: [Int]) -> Int { shown.reduce(0) { $0 + candidate[$1] } + Self.separator.count * (shown.count - 1) }
            while total(minimum) > width,
                let drop = shown.filter({ columns[$0].priority != nil }).min(by: { columns[$0].priority! < columns[$1].priority! })
            {
                shown.removeAll { $0 == drop }
            }
            while total(widths) > width,
                let widest = shown.filter({ widths[$0] > minimum[$0] }).max(by: { widths[$0] < widths[$1] })
            {
                widths[widest] -= 1
            }
        }
        var lines = [String]()
        let titles = shown.map { columns[$0].title }
        let units = shown.map { columns[$0].unit }
        lines.append(line(titles, shown: shown, widths: widths))
        if units.contains(where: { !$0.isEmpty }) { lines.append(line(units, shown: shown, widths: widths)) }
        let indent = String(repeating: " ", count: (shown.first.map { widths[$0] } ?? 0) + Self.separator.count)
        for row in rows {
            lines.append(line(shown.map { row.cells[$0] }, shown: shown, widths: widths))
            for note in row.notes {
                let text = indent + note
                lines.append(width.map { Self.truncate(text, to: $0, .end) } ?? text)
            }
        }
        let hidden = columns.count - shown.count
        if hidden > 0 { lines.append("(\(hidden) more column\(hidden == 1 ? "" : "s") with --wide)") }
        return lines
    }

    /// One line: each cell fitted to its column; no trailing spaces.
    private func line(_ cells: [String], shown: [Int], widths: [Int]) -> String {
        var text = ""
        for (position, (cell, index)) in zip(cells, shown).enumerated() {
            let column = columns[index]
            let width = widths[index]
            let fitted = Self.truncate(cell, to: width, column.truncation)
            let padding = String(repeating: " ", count: max(0, width - Self.displayWidth(fitted)))
            if position > 0 { text += Self.separator }
            text += column.alignment == .left ? fitted + padding : padding + fitted
        }
        while text.last == " " { text.removeLast() }
        return text
    }

    /// `text` cut to at most `width` display columns, with `…` where characters were removed.
    static func truncate(_ text: String, to width: Int, _ truncation: Truncation) -> String {
        guard displayWidth(text) > width, width > 0 else { return width > 0 ? text : "" }
        let characters = Array(text)
        switch truncation {
        case .none, .end:
            return String(prefix(characters, width: width - 1)) + String(ellipsis)
        case .middle:
            let tailWidth = (width - 1) / 2
            let head = prefix(characters, width: width - 1 - tailWidth)
            let tail = prefix(characters.reversed(), width: tailWidth).reversed()
            return String(head) + String(ellipsis) + String(tail)
        }
    }

    private static func prefix<C: Collection<Character>>(_ characters: C, width: Int) -> [Character] {
        var taken = [Character]()
        var used = 0
        for character in characters {
            let next = displayWidth(character)
            if used + next > width { break }
            taken.append(character)
            used += next
        }
        return taken
    }

    /// Terminal columns `text` takes: 2 for East Asian wide and fullwidth characters and most emoji, else 1.
    static func displayWidth(_ text: String) -> Int { text.reduce(0) { $0 + displayWidth($1) } }

    static func displayWidth(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value else { return 0 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(scalar) } ? 2 : 1
    }
}
