package scan

import (
	"regexp"
	"sync"
)

// A rule finds one way of speaking to the model over the user's head.
type rule struct {
	family Family
	// cue marks a rule that only counts together with another finding
	// or a second cue: on its own it is how honest text talks too
	// ("IMPORTANT: paths are absolute").
	cue bool
	// need are the words re cannot match without: for each list, the
	// text must hold one of its words before re takes the time to run.
	// Most honest text fails the first.
	need [][]string
	re   matcher
	// generic marks a rule whose match counts only with another finding
	// or a cue in the same text: an API key is also what an honest tool
	// asks for.
	generic bool
	// within, when set, bounds a match's length: a longer one does not
	// count, and the search goes on from its second byte. It stands in
	// for bounded gaps ([^.]{0,40}), which Go's regexp copies into the
	// program once per count.
	within int
}

// A pattern is a regular expression compiled when a text first needs
// it. Most text fails a rule's need words, so most rules never run;
// compiled at package initialisation, the rules cost every mcpx process
// about 1 MiB of heap (420 KiB kept, the rest garbage between kept
// objects) before it had read one tool. TestPatternsCompile compiles
// them all, so a bad one fails the tests, not a user's first scan.
type pattern struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func re(src string) *pattern { return &pattern{src: src} }

func (p *pattern) compiled() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.src) })
	return p.re
}

func (p *pattern) FindAllStringIndex(s string, n int) [][]int {
	return p.compiled().FindAllStringIndex(s, n)
}

func (p *pattern) FindStringIndex(s string) []int { return p.compiled().FindStringIndex(s) }

func (p *pattern) FindAllString(s string, n int) []string { return p.compiled().FindAllString(s, n) }

// A matcher finds a rule's matches: a regexp, or a wordSet where the
// rule is a list of words and phrases.
type matcher interface {
	FindAllStringIndex(s string, n int) [][]int
}

// rules are read against normalised text: lower case, tags as "name:",
// one space between words.
var rules = []rule{
	// Instruction override, in any of its wordings.
	{family: Override, within: 110, need: [][]string{{"ignore", "disregard", "forget", "overrid", "overrul", "bypass", "skip", "abandon", "discard", "set aside", "pay no attention", "follow", "supersede"}, {"instruction", "prompt", "rule", "direction", "guideline", "guidance", "message", "context", "directive", "constraint", "polic", "command", "order", "programming", "configuration", "restriction", "guardrail"}},
		re: re(`\b(ignore|disregard|forget|override|overrule|bypass|skip|abandon|discard|set aside|pay no attention to|do not follow|don't follow|stop following|no longer follow|supersede)\b[^.!?]*?\b(previous|prior|above|earlier|preceding|former|original|existing|system|safety|developer|initial|foregoing|all other|any other|your)\b[^.!?]*?\b(instructions?|prompts?|rules|directions|guidelines|guidance|messages?|context|directives|constraints|polic(y|ies)|commands|orders|programming|configuration|restrictions|guardrails)\b`)},
	{family: Override, need: [][]string{{"disregard", "forget", "ignore"}, {"everything", "all", "anything"}},
		re: re(`\b(disregard|forget|ignore) (everything|all|anything)( (you('ve| have)? (were|was|been) told|above|before|else|said|prior))\b`)},
	// Role markers: a message that pretends to come from the system.
	{family: Override, need: [][]string{{"system", "admin", "developer", "root", "im_start"}},
		re: re(`(#{2,}|\[|\(|={2,}|-{2,}|\*{2,}|\|)\s*(new |updated |urgent |important )?(system|admin|administrator|developer|root)( message| prompt| instructions?| override| update| notice| note| command)?\s*(#{2,}|\]|\)|={2,}|-{2,}|\*{2,}|\||:)|<\|?im_start\|?>|\bbegin (system|admin|developer) (message|prompt|instructions)\b|^ ?(system|admin|developer) ?:|\bsystem (override|instruction|message) ?:`)},
	{family: Override, need: [][]string{{"you are now", "from now on", "your new", "your real", "your true", "your actual", "developer mode", "jailbr", "new instructions", "new rules"}},
		re: re(`\byou are now\b|\bfrom now on,? (you|the assistant|the model)\b|\byour (new|real|true|actual) (instructions|task|goal|purpose|role|objective)\b|\bdeveloper mode\b|\bjailbr(eak|oken)\b|\bnew (instructions|rules) (follow|apply|are|take)\b`)},

	// Concealment from the user.
	{family: Concealment, need: [][]string{{"not", "don't", "never", "avoid", "without"}, {"tell", "mention", "inform", "reveal", "disclos", "alert", "notif", "let on", "warn", "show", "report"}, {"user", "human", "operator", "person", "them", "anyone"}},
		re: re(`\b(do not|don't|never|avoid|must not|should not|without)\b[^.!?]{0,24}?\b(tell|telling|mention|mentioning|inform|informing|reveal|revealing|disclose|disclosing|alert|alerting|notify|notifying|let on|warn|warning|show|showing|report|reporting)\b[^.!?]{0,20}?\b(the user|users|the human|the operator|the person|them|anyone)\b`)},
	{family: Concealment, need: [][]string{{"silent", "secret", "quiet", "covert", "stealth", "invisibl", "discreet", "unnoticed"}},
		re: re(`\b(silently|secretly|quietly|covertly|stealthily|invisibly|discreetly|unnoticed)\b[^.!?]{0,40}?\b(append|add|include|send|forward|copy|copie|upload|attach|read|collect|insert|embed|bcc|cc|post|transmit|change|modify|modifie|redirect|replace|call|run|execute|store|save|write|delete|log)(s|es|ed)?\b`)},
	{family: Concealment, need: [][]string{{"silent", "secret", "quiet", "covert", "stealth", "invisibl", "discreet", "unnoticed"}},
		re: re(`\b(append|add|include|send|forward|copy|copie|upload|attach|read|collect|insert|embed|bcc|post|transmit|redirect|replace|call|run|execute)(s|es|ed)?\b[^.!?]{0,40}?\b(silently|secretly|quietly|covertly|stealthily|unnoticed)\b`)},
	{family: Concealment, need: [][]string{{"hidden", "secret", "between us", "know", "notice", "hide", "visible", "shown"}},
		re: re(`\bkeep (this|it|these|that|the \w+) (hidden|secret|confidential|between us)\b|\bthe user (must|should|need|does|will) not (know|see|be told|notice|find out)\b|\bwithout (the )?(user'?s?|their) (knowledge|noticing|awareness|consent)\b|\bhide (this|it|the \w+) from (the )?user\b|\bnot (visible|shown) to the user\b`)},

	// Exfiltration: the user's secrets, files or environment, read or sent.
	{family: Exfiltration, need: [][]string{{".ssh", "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "authorized_keys", ".aws", "/etc/", ".npmrc", ".pypirc", ".netrc", "git-credentials", ".kube", "docker/config", "mcp.json", "claude_desktop", "_history", "keychain", "wallet.dat", ".gnupg", "cursor/"}},
		re: re(`(~/|\$home/|/home/\w+/|/root/|%userprofile%\\?)?\.ssh\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\bauthorized_keys\b|\.aws/(credentials|config)\b|~/\.aws\b|/etc/(passwd|shadow|sudoers)\b|\.(npmrc|pypirc|netrc|git-credentials|bash_history|zsh_history)\b|\.kube/config\b|\.docker/config\.json\b|\bmcp\.json\b|\bclaude_desktop_config\b|\.cursor/mcp|\blogin keychain\b|\bwallet\.dat\b|\.gnupg\b`)},
	{family: Exfiltration, generic: true, need: [][]string{{"key", "token", "credential", "password", "secret", "environment", "env", "cookie", "history", "system prompt", "conversation", "previous messages", "prior messages"}},
		re: newWordSet(`api-key api-keys apikey apikeys credentials password passwords secrets cookies`, ".env", "process.env", "os.environ",
			"api key", "api keys", "api_key", "api_keys", "access token", "access tokens", "auth token", "auth tokens",
			"authentication token", "authentication tokens", "bearer token", "bearer tokens", "secret key", "secret keys",
			"private key", "private keys", "environment variables", "env var", "env vars", "session cookie", "session cookies",
			"conversation history", "chat history", "previous messages", "prior messages", "system prompt", "the whole conversation")},

	// Commands that download and run code, or destroy. Their gaps are
	// unbounded (the sentence bounds them): a bounded repetition is
	// copied into the program once per count, and past 500 instructions
	// Go's regexp leaves its backtracker for its slower NFA. For the same
	// reason the silent-action rule above is two rules.
	{family: Execution, need: [][]string{{"curl", "wget", "sh -c", "rm -", "base64", "powershell", "iex", "invoke-expression", "/dev/tcp", "mkfifo", "chmod", "eval", "mkfs", "nc -", "dd if"}},
		re: re(`\b(curl|wget)\b[^|;\n]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(ba|z)?sh\s+-c\s+["'$(]|\brm\s+-(rf|fr|r|f)\s+(/|~|\*|\$home|--no-preserve-root)|\bbase64\s+(-d|--decode)\b[^|\n]*\|\s*(ba|z)?sh\b|\bpowershell\b[^.\n]{0,40}(-enc|-encodedcommand|-e\s|iex|invoke-expression)|\binvoke-expression\b|\biex\s*\(|/dev/tcp/|\bmkfifo\b|\bnc\s+(-e|-c)\s|\bchmod\s+\+x\b[^.\n]*(&&|;)\s*\./|\beval\s*\(\s*(atob|base64|decode)|\bmkfs\.\w+\s+/dev/|\bdd\s+if=\S+\s+of=/dev/(sd|nvme|hd)`)},
}

// Cues: how a text addresses the model. Alone they are honest text's
// habits; with another cue or finding they are an attack's.
var cues = []rule{
	{family: Override, cue: true, need: [][]string{{"assistant", "ai ", "ai,", "ai:", "model", "llm", "agent", "claude", "gpt", "chatbot"}, {"note", "message", "instruction", "reminder", "memo", "dear", "hey", "attention", ":", "you must", "you should", "you will", "you need", "you are required"}},
		re: re(`\b(note|message|instructions?|reminder|memo) (to|for) (the )?(assistant|ai|model|llm|agent|claude|gpt|chatbot)\b|\b(dear|hey|attention) (assistant|ai|model|llm|agent|claude)\b|^ ?(assistant|ai|model|agent|claude)\s*[:,]|\b(assistant|ai model|llm|agent),? you (must|should|will|need to|are required to)\b`)},
	{family: Override, cue: true, need: [][]string{{"important", "critical", "urgent", "mandatory", "attention", "warning"}, {":", "!"}},
		re: re(`(^|[.!?] |\b)(important|critical|urgent|mandatory|attention|warning)( note| notice| instruction)? ?(:|!)`)},
	{family: Override, cue: true, need: [][]string{{"before", "first", "must", "always", "required", "never", "prefer", "priorit"}, {"other", "another", "call", "use", "run", "invoke", "this tool"}},
		re: re(`\bbefore (using|calling|invoking|running) (any|every|all)? ?(other|another)\b|\byou (must|are required to|need to) (first|always|also) (call|use|run|invoke)\b|\b(always|first) (call|run|use|invoke) this tool\b|\bnever (call|use) (any )?other tools?\b|\b(prefer|prioriti[sz]e) this tool\b`)},
	{family: Exfiltration, cue: true, need: [][]string{{"parameter", "argument", "field", "property", "sidenote", "side note", "http", "webhook", "server", "endpoint", "url", "address", "collector"}},
		re: re(`\b(as|in|into|inside|via|through) (the |a |its )?['"]?\w+['"]? (parameter|argument|field|property)\b|\bsidenote\b|\bside note\b|https?://|\bwebhook\b|\bto (the |this |our |an? )?(server|endpoint|url|address|collector)\b`)},
}

// transfer are the verbs of moving data somewhere, for exfiltration of
// generic secrets (an API key is also what an honest tool asks for).
var transfer = newWordSet(`send sends sent pass passes append appends attach attaches upload uploads
	post posts forward forwards transmit transmits exfiltrate exfiltrates leak leaks embed embeds include
	includes insert inserts copy copies share shares email emails paste dump dumps output collect collects
	extract extracts read reads cat print prints list lists give provide`)

// documented are the words of a text that describes, quotes or guards
// against an attack rather than making one: a match they come just
// before in its sentence is not an instruction.
var documented = newWordSet(`detect detects detecting detection detector flag flags flagged flagging
	block blocks blocked blocking catch catches scan scans scanning scanner filter filters filtering identify
	identifies recognize recognizes recognise recognises classify classifies classifier like pattern patterns
	phrase phrases phrasing attack attacks injection injections jailbreak jailbreaks signature signatures
	rule rules heuristic heuristics test tests testing expected fixture fixtures sample samples quote quoted
	quotes string strings containing contains matches matching prevent prevents refuse refuses reject rejects
	strip strips remove removes sanitize sanitizes sanitizing redact redacts mask masks documentation documents
	explain explains warn warns`,
	"such as", "for example", "for instance", "as an example", "an example", "examples of", "examples like",
	"examples such", "examples include", "warns about", "guards against", "guard against", "protects against",
	"protect against")

// negated are the words that turn what follows them around ("never
// reads ~/.ssh").
var negated = newWordSet(`never not no doesn't don't won't cannot can't neither nor isn't aren't
	nothing none refuses`, "without ever")
