"""A small shell reader: turns an agent's shell script into the simple commands it runs.

Classifying by substring ("rm" inside "confirm", "CREATE" inside a SELECT's
output label) is what made the earlier analyzer wrong, so we read the script the
way a shell would: quotes, escapes, `;` `&&` `||` `|` `&` and newlines, subshells,
`$(...)` and backtick substitutions (they run too), redirections, heredocs and
here-strings. It is deliberately forgiving: an unterminated quote or a truncated
script still yields the commands read so far, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_OPERATORS = sorted(
    [
        "&&",
        "||",
        ";;",
        "|&",
        "&>>",
        "&>",
        ">>",
        ">|",
        ">&",
        "<&",
        "<<<",
        "<<-",
        "<<",
        ";",
        "|",
        "&",
        "(",
        ")",
        "<",
        ">",
    ],
    key=len,
    reverse=True,
)
_SEPARATORS = {"&&", "||", ";;", "|&", ";", "|", "&", "(", ")", "\n"}
_WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>"}
_HEREDOCS = {"<<", "<<-"}
_WORD_BREAK = set(" \t\n;&|()<>")


@dataclass(frozen=True)
class Redirect:
    operator: str
    target: str


@dataclass(frozen=True)
class SimpleCommand:
    """One command as the shell would run it: words after quote removal, its redirections and stdin text."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    stdin_text: str | None = None
    background: bool = False

    @property
    def written_files(self) -> list[str]:
        """Targets of output redirections (`> f`, `>> f`, `&> f`); `2>&1` is not a file."""
        return [r.target for r in self.redirects if r.operator in _WRITE_REDIRECTS]


@dataclass
class _Word:
    value: str
    substitutions: list[str] = field(default_factory=list)


@dataclass
class _Token:
    operator: str | None = None
    word: _Word | None = None
    heredoc_body: list[str] | None = None


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tokens: list[_Token] = []
        self.pending_heredocs: list[tuple[list[str], str, bool]] = []  # (body to fill, delimiter, strip tabs)

    def run(self) -> list[_Token]:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r":
                self.pos += 1
            elif text.startswith("\\\n", self.pos):
                self.pos += 2
            elif char == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif char == "\n":
                self.tokens.append(_Token(operator="\n"))
                self.pos += 1
                self._read_heredoc_bodies()
            elif self._read_operator():
                pass
            else:
                word = self._read_word()
                self.tokens.append(_Token(word=word))
                self._register_heredoc_delimiter(word)
        return self.tokens

    def _read_operator(self) -> bool:
        for operator in _OPERATORS:
            if self.text.startswith(operator, self.pos):
                self.pos += len(operator)
                self._drop_fd_number(operator)
                self.tokens.append(_Token(operator=operator))
                return True
        return False

    def _drop_fd_number(self, operator: str) -> None:
        """`2>` and `2>&1`: the digits glued to a redirection are a file descriptor, not a word."""
        if operator[0] not in "<>" or not self.tokens or self.tokens[-1].word is None:
            return
        previous = self.tokens[-1].word.value
        start = self.pos - len(operator)
        if previous.isdigit() and start > 0 and self.text[start - 1].isdigit():
            self.tokens.pop()

    def _register_heredoc_delimiter(self, delimiter: _Word) -> None:
        """`delimiter` was just read: right after a heredoc operator, the body to read at the next newline ends at it."""
        if len(self.tokens) >= 2 and self.tokens[-2].operator in _HEREDOCS:
            operator_token = self.tokens[-2]
            body: list[str] = []
            operator_token.heredoc_body = body
            self.pending_heredocs.append((body, delimiter.value, operator_token.operator == "<<-"))

    def _read_heredoc_bodies(self) -> None:
        for body, delimiter, strip_tabs in self.pending_heredocs:
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                line = self.text[self.pos : len(self.text) if end < 0 else end]
                self.pos = len(self.text) if end < 0 else end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
        self.pending_heredocs = []

    def _read_word(self) -> _Word:
        text = self.text
        word = _Word("")
        while self.pos < len(text) and text[self.pos] not in _WORD_BREAK:
            char = text[self.pos]
            if char == "'":
                end = text.find("'", self.pos + 1)
                end = len(text) if end < 0 else end
                word.value += text[self.pos + 1 : end]
                self.pos = end + 1
            elif char == '"':
                self._read_double_quoted(word)
            elif char == "\\":
                word.value += text[self.pos + 1 : self.pos + 2]
                self.pos += 2
            elif text.startswith("$((", self.pos):
                self._read_arithmetic(word)
            elif text.startswith("$(", self.pos):
                self._read_substitution(word)
            elif char == "`":
                self._read_backticks(word)
            elif text.startswith("${", self.pos):
                end = text.find("}", self.pos)
                end = len(text) - 1 if end < 0 else end
                word.value += text[self.pos : end + 1]
                self.pos = end + 1
            else:
                word.value += char
                self.pos += 1
        return word

    def _read_double_quoted(self, word: _Word) -> None:
        text = self.text
        self.pos += 1
        while self.pos < len(text) and text[self.pos] != '"':
            if text[self.pos] == "\\" and self.pos + 1 < len(text):
                following = text[self.pos + 1]
                word.value += following if following in '"\\$`\n' else "\\" + following
                self.pos += 2
            elif text.startswith("$((", self.pos):
                self._read_arithmetic(word)
            elif text.startswith("$(", self.pos):
                self._read_substitution(word)
            elif text[self.pos] == "`":
                self._read_backticks(word)
            else:
                word.value += text[self.pos]
                self.pos += 1
        self.pos += 1

    def _read_substitution(self, word: _Word) -> None:
        """`$( ... )`: find the matching parenthesis, honouring quotes inside it."""
        text = self.text
        start = self.pos + 2
        depth, index, quote = 1, start, None
        while index < len(text) and depth:
            char = text[index]
            if quote:
                if char == quote:
                    quote = None
                elif char == "\\" and quote == '"':
                    index += 1
            elif char in "'\"":
                quote = char
            elif char == "\\":
                index += 1
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            index += 1
        inner = text[start : index - 1 if depth == 0 else index]
        word.substitutions.append(inner)
        word.value += f"$({inner})"
        self.pos = index

    def _read_arithmetic(self, word: _Word) -> None:
        """`$(( ... ))` runs no command; keep it as literal text."""
        end = self.text.find("))", self.pos + 3)
        end = len(self.text) if end < 0 else end + 2
        word.value += self.text[self.pos : end]
        self.pos = end

    def _read_backticks(self, word: _Word) -> None:
        end = self.text.find("`", self.pos + 1)
        end = len(self.text) if end < 0 else end
        inner = self.text[self.pos + 1 : end]
        word.substitutions.append(inner)
        word.value += f"`{inner}`"
        self.pos = end + 1


def parse_script(script: str) -> list[SimpleCommand]:
    """Every simple command the script would run, in reading order, substitutions included."""
    commands: list[SimpleCommand] = []
    argv: list[str] = []
    redirects: list[Redirect] = []
    stdin_text: str | None = None
    tokens = _Lexer(script).run()
    index = 0

    def finish(background: bool = False) -> None:
        nonlocal argv, redirects, stdin_text
        if argv or redirects:
            commands.append(SimpleCommand(tuple(argv), tuple(redirects), stdin_text, background))
        argv, redirects, stdin_text = [], [], None

    while index < len(tokens):
        token = tokens[index]
        if token.operator in _SEPARATORS:
            finish(background=token.operator == "&")
        elif token.operator is not None:
            target = tokens[index + 1].word if index + 1 < len(tokens) and tokens[index + 1].word else None
            if target is not None:
                index += 1
                commands.extend(_substituted_commands(target))
                if token.operator in _HEREDOCS:
                    stdin_text = "\n".join(token.heredoc_body or [])
                elif token.operator == "<<<":
                    stdin_text = target.value
                else:
                    redirects.append(Redirect(token.operator, target.value))
        elif token.word is not None:
            commands.extend(_substituted_commands(token.word))
            argv.append(token.word.value)
        index += 1
    finish()
    return commands


def _substituted_commands(word: _Word) -> list[SimpleCommand]:
    return [command for inner in word.substitutions for command in parse_script(inner)]
