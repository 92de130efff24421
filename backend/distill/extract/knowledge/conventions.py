"""Conventions: the rules and preferences a user states, and their scope (this project or every one)."""

from __future__ import annotations

import re

from ..caseless import Caseless

# (one alternative, which needs a capital, is _FOLLOWS_NAME: the rest are matched lowercased)
_CONVENTION = Caseless(
    re.compile(
        r"(?<![/-])\b(?:always|never|prefer(?![-/])|avoid|make sure (?:to|that|you)|from now on|going forward|by default|as a rule|"
        r"(?:please\s+)?(?:don'?t|do not|no need to)\s+(?:ever\s+)?(?:use|add|commit|push|write|put|call|import|mock|"
        r"create|run|touch|change|leave|modify|edit|rename|delete|install|bump|hardcode|hard-code|log|print|skip|"
        r"disable|force|merge|rebase|include)|(?:we|i) (?:want|like|use|keep|write|name|put)\s+(?:\w+\s+){0,3}"
        r"(?:in|for|as|with) (?:every|all|each)|keep (?:\w+ ){0,3}(?:under|below|short|small|thin|lean|simple|minimal|pure|flat|sorted|consistent|typed|private|separate|updated|up[ -]to[ -]date|in sync|documented)|keep (?:\w+ ){1,3}(?:at|to|within) \d+|"
        r"(?:should|must) (?:always|never|be|have|use|follow)|stick to|(?:please\s+)?(?:use|write|import|export)\s+(?:\w+\s+){1,4}only|"
        r"conventions?\b(?![.\w])|style guide|naming|"
        r"(?:every|all|each|any)\s+(?:\w+\s+){0,2}(?:needs?|must|should|has to|have to|gets?)\b|"
        r"(?:we|i)\s+follow|my (?:general |personal )?(?:preference|style|rule) is|(?:please\s+)?stop\s+(?:using|adding|writing|putting|calling)|"
        r"(?:i|we)(?:'d)? (?:want|like|prefer|expect)\s+(?!you\b|to\b|it\b|this\b|that\b|the\b|a\b|an\b)\w+|"
        # a correction of what the agent did: "I only want 1 object", "we don't want two log pages"
        r"(?:i|we) (?:only|just|really) (?:want|need)\b|(?:i|we) (?:do not|don'?t|dont) (?:want|need|like)\s+(?!to know\b|it\b|this\b|that\b|them\b|you\b)\w+|"
        # a named way of working: "follow best practices from <link>", "follow the team's guidelines"
        r"follow (?:\w+ ){0,3}(?:best practices|practices|guidelines?|conventions|standards?|style|rules)|"
        # a reminder: "I remind you the main directive ...", "don't forget to ...", "every time you ..."
        r"(?:i )?remind you|as a reminder|(?:don'?t|do not|never) forget to|every time you|"
        # a step before or after another: "run `make lint` before pushing", "update the changelog after each release"
        r"(?:run|test|lint|format|check|build|rebase|update|regenerate|rerun|re-run)\b[^.;]{0,60}?\b(?:before|after)\s+"
        r"(?:each|every|any|all|committing|pushing|merging|opening|submitting|deploying|releasing|you (?:commit|push|merge)|"
        r"a (?:commit|push|pr|release|deploy))\b|"
        # where things of a kind are kept: "save the reports in reports/", "put all scripts under tools/"
        r"(?:save|put|write|keep|store|place)\s+(?:all\s+|the\s+|any\s+|your\s+)?(?:[\w-]+\s+){0,2}(?:reports?|logs?|"
        r"notes|plans?|docs|documentation|screenshots|outputs?|results|scripts|migrations|fixtures)\s+(?:in|into|under|inside)"
        r"\s+(?:the\s+)?[`'\"]?\.?[\w.-]*\w(?=/)|"
        # a tool to use by its MCP server: "use the context7 MCP for library docs"
        r"use\s+(?:the\s+)?(?:[\w.-]+\s+){1,2}mcp\b|"
        # the environment work goes to, by its name: "the sandbox environment which is named Sandbox01"
        r"(?:environment|sandbox|tenant|workspace|cluster|namespace|account|instance|database|bucket|region)"
        r"(?:\s+\w+)?\s+(?:which\s+|that\s+)?(?:is\s+)?(?:named|called)\s+[\"'`]?[a-z0-9][\w.-]*\d[\w.-]*)\b",
        re.I,
    )
)


# "we follow the Google style guide", "follows PEP 8": a named style
_FOLLOWS_NAME = re.compile(r"\bfollows?\s+(?:the\s+)?(?-i:[A-Z])\w*\b", re.I)


ONE_OFF_PATTERN = r"(?:don'?t|do not) (?:change|touch|modify|edit|alter) (?:the )?(?:contents?|content of|it|this|that|them|anything)\b"
# an instruction about the edit at hand, neither a rule nor a decision
ONE_OFF = Caseless(re.compile(rf"\b{ONE_OFF_PATTERN}", re.I))
_PARTICIPLE = (
    r"(?:used|tried|tested|worked|noticed|encountered|experienced|needed|wanted|liked|happened|managed|"
    r"seen|been|done|gone|known|heard|had|got|gotten|thought)"
)
_NOT_CONVENTION = Caseless(
    re.compile(
        r"\b(?:don'?t (?:know|think|worry|understand|see|have|get|remember)|never mind|always wanted|"
        # a one-off about what is being edited ("DO NOT CHANGE the contents"), not a rule
        rf"{ONE_OFF_PATTERN}|"
        r"do not (?:know|understand)|why does|what does|how do|"
        # a hedged proposal ("I think maybe we should have a table ..."), not a rule
        r"i think|i guess|maybe|perhaps|"
        # for now only, or about the work just done ("the same logic should ...", "you already ..."), not a rule
        r"right now|for now|for the moment|at the moment|this time|same (?:logic|thing|approach|way|fix|change|for)|"
        r"you(?:'re| are)? already|i (?:want|need) (?:some|more|a few)|"
        r"make (?:this|that|it) (?:as )?an? (?:rule|convention))\b|"
        r"^\"[\w.-]+\"\s*:|"  # a line of pasted JSON ("description": "...")
        # what the thing being built should do ("it should use the log"): its spec, not a rule
        r"^(?:and |but |so )?(?:it|this|that|they|these|those) (?:should|must)\b(?! always| never)|"
        # ... or of one thing of it named ("the extension should use the API", "the default model
        # should be X"): a generic plural states a rule ("tests should use fixtures"), a singular the spec
        r"^(?:and |but |so )?(?:the|this|our|my|its|their) (?:[\w-]+ ){0,3}?[\w-]*[^s\W] (?:should|must)\b(?! always| never)"
        # (how the work is kept is a rule still: "the readme should be updated throughout")
        r"(?! (?:be |stay |remain )?(?:kept|updated|up to date|documented|formatted|tested|reviewed|linted|typed|named|"
        r"written in|sorted|short|small)\b)|"
        r"\b(?:which|that) you (?:should|must)\b|"  # "symbols which you should use": not the rule's verb
        # what was never so ("never seen this error before"): no order
        rf"^(?:i(?:'ve| have)? )?never\s+{_PARTICIPLE}\b|"
        # a yes to what the agent proposed ("Yes add a role center ..."): the task at hand
        r"^(?:yes|yeah|yep|ok(?:ay)?|sure|great|perfect|nice|good)\b[,!. ]*(?:please )?"
        r"(?:add|do|go|implement|make|create|fix|proceed|continue|build|change|update)\b|"
        r"^(?:is|are|do|does|can|could|should|would|will) (?:there|we|you|it|i)\b",  # a question, its "?" left off
        re.I,
    )
)


_GLOBAL = Caseless(
    re.compile(
        r"\b(?:in (?:every|all|any)(?: of)?(?: my)?(?: \w+){0,2} (?:projects?|repos?|repositories|codebases?)|"
        r"across (?:all )?(?:my )?(?:projects|repos)|globally|in general|for all my|whatever the project|"
        r"all my (?:\w+ )?(?:projects|code|repos)|whatever (?:i|we) (?:work on|build|write)|"
        r"(?:for|in) (?:any|all|every) (?:code|script|program) (?:you write|you generate|of mine)|"
        r"my (?:general |personal )?(?:preference|style|rule) is)\b",
        re.I,
    )
)
# the same in the other languages (the lexicon of _CONVENTION_OTHER): "em todos os meus projetos",
# "во всех проектах", "所有项目", "we wszystkich projektach", "en todos mis proyectos"
_GLOBAL_OTHER = re.compile(
    r"\b(?:em todos os (?:meus )?projetos|en todos (?:mis |los )?proyectos|во всех (?:моих |своих )?проектах|"
    r"we wszystkich (?:moich )?projektach)\b|所有(?:的)?项目|每个项目",
    re.I,
)
# a rule for the language answers are written in: "reply in English", "responda em português",
# "отвечай на русском", "用中文回答", "odpowiadaj po polsku"
_REPLY_LANGUAGE = re.compile(
    r"^(?:(?:please|always|only|and),? )*(?:reply|respond|answer|talk|speak)(?: to me)?(?: only| always)? in (?-i:[A-Z])\w+\b|"
    r"\b(?:respond[ae](?: sempre)? (?:em|en) \w+|отвечай\w* (?:на|по)[ -]\w+|odpowiadaj\w* po \w+)\b|用\w{1,3}(?:文|语)(?:回答|回复)",
    re.I,
)


_EVERYWHERE = Caseless(re.compile(r"\b(?:everywhere|throughout|across the (?:code ?base|project|repo))\b", re.I))


_WANT = Caseless(re.compile(r"\b(?:want|use|like|prefer|need|write|keep|name|put)\b", re.I))


# the same cues in the other languages users write in: a small lexicon of imperative and
# preference markers per language (Portuguese, Spanish, Russian, Polish, Chinese), not phrases
_CONVENTION_OTHER = re.compile(
    r"\b(?:sempre|nunca|prefira|evite|n[ãa]o (?:use|usar|utilize|adicione|crie|fa[çc]a|deixe|altere|commite)|"
    r"siempre|prefiere|evita|no (?:uses|utilices|a[ñn]adas|dejes)|"
    r"всегда|никогда|предпочитай\w*|избегай\w*|не (?:используй|добавляй|пиши|оставляй|меняй|коммить)\w*|"
    r"zawsze|nigdy|preferuj|unikaj|nie (?:u[żz]ywaj|dodawaj|zostawiaj|pisz|commituj))\b|"
    r"总是|始终|一律|永远不要|禁止|务必|请勿|不要(?!紧)|优先使用|统一使用|必须|一定要|要求",
    re.I,
)
# "não sei" (I don't know), "sempre que" (whenever): no rule
# a requirement written in capitals, as rules are stressed ("every claim MUST cite its source")
_EMPHASIS = re.compile(r"\b(?:MUST(?: NOT)?|SHALL(?: NOT)?)\s+[a-z]{2,}")
_CONVENTION_OTHER_NOT = re.compile(r"\b(?:n[ãa]o sei|no s[ée]|не знаю|nie wiem|sempre que|siempre que)\b|不知道", re.I)


# a negated imperative opening a sentence ("Do not reinit the tracker", "Never squash merges"):
# a rule whatever its verb, unless it is about the thing at hand ("don't do that") or no instruction
_NEGATED_IMPERATIVE = Caseless(
    re.compile(
        r"^(?:(?:also|and|but|so|please|pls|just|again),?\s+)*(?:don'?t|dont|do not|never)\s+(?:ever\s+)?"
        r"(?!(?:be|have|need|mind|bother|worry|know|think|understand|see|get|remember|care|want|like|forget|again|ever)\b)"
        # (a past participle is no order: "never seen this error before")
        rf"(?!{_PARTICIPLE}\b|(?:saw|did|was|were|came|went)\b)"
        r"[a-z][\w-]+\b(?!\s+(?:it|this|that|them|these|those|anything|yet|now)\b)",
        re.I,
    )
)
# the same by the grammar of other languages: a Russian negated imperative ("не запускай", "не
# пишите"; a past plural "не были" is none), a Chinese prohibition or obligation ("不要", "必须")
_NEGATED_IMPERATIVE_OTHER = re.compile(
    r"^(?:и |но |пожалуйста,? )?не [а-яё]+(?:й|йте|(?<!л)и|(?<!л)ите)\b|不要(?!紧)|必须|一定要|务必|要求",
    re.I,
)
# a named thing said to be the subject: "voucherNumber should be easy to get" is its spec
_IDENTIFIER_SUBJECT = re.compile(r"^(?:[A-Za-z][a-z]+[A-Z]\w*|\w+_\w+|\w+\.\w+)\s+(?:should|must)\b(?! always| never)")


# a constraint the user asks to be kept in mind: "we're on the free tier, keep that in mind",
# "bear in mind that the API allows 10 calls a minute"; the rule is what is to be kept in mind
_IN_MIND_AFTER = re.compile(
    r"[,;]\s*(?:and\s+|so\s+)?(?:please\s+)?(?:keep|bear|have) (?:that|this|it) in mind\b.*$|"
    r"[,;]\s*(?:tenha|tenham|tened|ten) (?:isso )?(?:em mente|en cuenta)\b.*$|[,;]\s*(?:имей|имейте) (?:это )?в виду.*$",
    re.I,
)
_IN_MIND_BEFORE = re.compile(
    r"^(?:(?:also|and|but|so|please|just),?\s+)*(?:keep|bear) in mind(?: that)?,?\s+|^(?:имей|имейте) в виду,? что\s+",
    re.I,
)


def _kept_in_mind(sentence: str) -> str:
    """What a sentence asks to keep in mind ("" when it asks no such thing)."""
    m = _IN_MIND_AFTER.search(sentence)
    if m is not None:
        before = sentence[: m.start()]
        part = before.rsplit(",", 1)[-1].strip()  # "Fetch the docs, we're on the Free Tier, keep ..."
        return part if len(part.split()) >= 2 else before.strip()
    m = _IN_MIND_BEFORE.match(sentence)
    return sentence[m.end() :].strip() if m is not None else ""


# a formatting element ruled out: "No emojis.", "No asterisks in the bot's messages." ("No, ..." answers)
_NO_ELEMENT = Caseless(
    re.compile(
        r"^no\s+(?:more\s+)?(?:emojis?|emoticons|asterisks?|markdown|bold|italics?|headings?|headers|bullet points?|"
        r"comments|docstrings|semicolons|tabs|trailing \w+|todos?|placeholders?|magic numbers|abbreviations|jargon|"
        r"apologies|filler|console\.log|print statements?)\b",
        re.I,
    )
)


def is_convention(sentence: str) -> bool:
    if sentence.endswith(("?", "？")) or _NOT_CONVENTION.found(sentence) or _IDENTIFIER_SUBJECT.match(sentence):
        return False
    if _NEGATED_IMPERATIVE.found(sentence) or _NO_ELEMENT.found(sentence):
        return True
    if not sentence.isascii() and _NEGATED_IMPERATIVE_OTHER.search(sentence):
        return True
    if ("mind" in sentence or not sentence.isascii()) and len(_kept_in_mind(sentence).split()) >= 2:
        return True
    if _CONVENTION_OTHER.search(sentence) and not _CONVENTION_OTHER_NOT.search(sentence):
        return True
    if _REPLY_LANGUAGE.search(sentence) or _EMPHASIS.search(sentence):
        return True
    if _CONVENTION.found(sentence) or ("ollow" in sentence.lower() and _FOLLOWS_NAME.search(sentence)):
        return True
    # "we use table-driven tests everywhere": a rule of this project; "in every project I want ...": of all
    return (_GLOBAL.found(sentence) or _EVERYWHERE.found(sentence)) and _WANT.found(sentence)


def is_global(sentence: str) -> bool:
    return _GLOBAL.found(sentence) or _GLOBAL_OTHER.search(sentence) is not None


# -- scope and wording ----------------------------------------------------------------------------

# a rule about how answers are written holds wherever the user works ("keep answers short", "no emojis")
_ABOUT_ANSWERS = Caseless(
    re.compile(
        r"\b(?:your |the )?(?:answers?|responses?|replies|explanations?)\b|\b(?:reply|respond|answer|explain)\s+(?:in|with|briefly|"
        r"concisely|only|without|like)\b|\bemojis?\b|(?:^(?:please\s+)?|\byou\s+(?:should\s+|must\s+)?)be (?:brief|concise|terse|short|direct)\b",
        re.I,
    )
)
# "I always/never/prefer ...": the user's own habit, unless it names this project
# ("I want you to update the spec" asks for this project, no habit of the user's)
_PERSONAL = Caseless(
    re.compile(r"^(?:i|i'd|i personally)\s+(?:always|never|prefer|like|hate|dislike|want)\b(?! you\b| it\b)", re.I)
)
_HERE = Caseless(re.compile(r"\b(?:this|the) (?:project|repo|repository|codebase|app|service)\b|\bhere\b", re.I))
# "in all my Python projects", "every JS repo", "for TypeScript code": a language's projects
_LANGUAGE_WIDE = re.compile(
    r"\b(?:in|for|across)?\s*(?:every|all|any)(?: of)?(?: my| our)? ([A-Za-z][\w.+#]*) (?:projects?|repos?|code ?bases?|code)\b",
    re.I,
)
_SHORT_LANGUAGES = {"js": "JavaScript", "ts": "TypeScript", "py": "Python", "node": "Node.js", "golang": "Go"}


def scope_of(sentence: str) -> tuple[bool, str]:
    """(whether a rule holds in every project, the language whose projects it is about, or "")."""
    m = _LANGUAGE_WIDE.search(sentence)
    language = ""
    if m is not None:
        word = m.group(1)
        language = _SHORT_LANGUAGES.get(word.lower(), "")
        if not language:
            from .. import vocabulary  # (a language named by its projects)

            tech = vocabulary.lookup(word)
            language = tech.name if tech is not None and tech.category in ("language", "runtime") else ""
    personal = _PERSONAL.found(sentence) and not _HERE.found(sentence)
    answers = _ABOUT_ANSWERS.found(sentence) or _REPLY_LANGUAGE.search(sentence) is not None
    every = bool(language) or is_global(sentence) or answers or personal
    return every, language


LABELLED = re.compile(r"^[\w /&-]{2,30}:\s+(?=\S)")  # "Error handling: always ..."
_PREAMBLE = re.compile(
    r"^(?:(?:ok(?:ay)?|also|and|btw|by the way|note|one more thing|important|reminder|please|pls|just|oh|so|"
    r"from now on|going forward|moving forward|in (?:this|the) (?:project|repo)|for (?:this|the) (?:project|repo)|"
    r"in (?:every|all|any)(?: of)?(?: my)?(?: \w+){0,2} (?:projects?|repos?|code ?bases?)|across (?:all )?my projects|"
    r"in general|generally|as a rule|my (?:general |personal )?(?:preference|style|rule) is|as a reminder|"
    r"(?:i )?remind you(?: of| that)?(?: the (?:\w+ )?(?:directive|rule|convention)s?)?(?: that)?|em todos os (?:meus )?projetos|en todos (?:mis |los )?proyectos|"
    r"во всех (?:моих |своих )?проектах|we wszystkich (?:moich )?projektach)\b[,:;!]?\s*)+",
    re.I,
)
_ASKING = re.compile(
    r"^(?:i(?:'d| would)? (?:want|like|need) (?:you )?to|you should|you must|can you|could you|make sure (?:to|that you|you)|"
    r"remember to|be sure to|try to|please)\s+",
    re.I,
)
_REASON = re.compile(
    r"\s+(?:because|since|so that|so we|as it|as they|which (?:is(?! named| called)|makes)|to (?:encourage|ensure|avoid|prevent|make|"
    r"keep|improve|simplify|aid|help|reduce|enhance|minimi[sz]e|allow|enable|maintain|guarantee)|for (?:readability|"
    r"hoistability|clarity|consistency|safety|better))\b.*$|,?\s+(?:such as|e\.g\.)\s.*$|,\s+like\s.*$|\s*(?:;|—|–|\s-\s|(?<!\d)\.\s).*$",
    re.I,
)
_TRAILER = re.compile(
    r"[,;]?\s*(?:please|thanks?(?: you)?|thx|from now on|going forward|in this (?:project|repo)|"
    r"in (?:every|all|any)(?: of)?(?: my)?(?: \w+){0,2} (?:projects?|repos?|code ?bases?)|em todos os (?:meus )?projetos|"
    r"en todos (?:mis |los )?proyectos|во всех (?:моих |своих )?проектах|we wszystkich (?:moich )?projektach)\s*[.!]*$",
    re.I,
)
CLAUSE_CHARS = 72
_WIDE = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")  # CJK: three bytes a character
_OPEN_ASIDE = re.compile(r"\s*\([^)]*$")  # an aside the sentence split cut ("prefer type aliases (e.g")
# an aside in parentheses (its code may hold parentheses of its own: `function foo() {}`)
_ASIDE = re.compile(r"\s*\((?!not\b|never\b|no\b|only\b)(?:[^()]|\([^()]*\))+\)")


# a long rule keeps what it contrasts: "prefer A and B-ish things over C" -> "prefer A over C";
# "declare numbers, strings, and similar values as const" -> "declare numbers etc. as const"
_CONTRAST = r"(?:over|instead of|rather than|not)"
_BEFORE_CONTRAST = re.compile(rf",?\s+(?:and|or)\s+[^,;]{{1,40}}?(?=,?\s+{_CONTRAST}\b)", re.I)
_ENUMERATION = re.compile(
    r"(?:,\s+[^,;]{1,30}?){2,6},?\s+(?:and|or)\s+[^,;]{1,40}?(?=\s+(?:as|for|in|to|with|from|over|into|on)\b)"
    r"|(?:,\s+[^,;]{1,30}?){1,6},?\s+(?:and|or)\s+(?:\S+\s+){0,2}\S+$",  # a list at the end: its last item short
    re.I,
)


def _shortened(text: str) -> str:
    text = _BEFORE_CONTRAST.sub("", text, count=1)
    if len(text) > CLAUSE_CHARS:
        text = _ENUMERATION.sub(" etc.", text, count=1)
    return text


# a clause joined on with a comma, its own subject and verb: the reason or an aside ("Do not
# reinit it, we don't want to lose the history"); not after an opening "if/when ..." clause
_SPLICE = re.compile(
    r"(?<=\w),\s+(?:we|i|it|you|they|this|that|there)(?:'\w+)?\s+(?:\w+n't|do|does|did|are|is|was|were|have|has|had|"
    r"want|need|will|would|can|could|may|might|should|must|use|got|lose)\b.*$",
    re.I,
)
# ... or the task it asks for now: "I want the data in the repo folder, adjust the compose file"
_TASK_AFTER = re.compile(
    r",\s*(?:so\s+|please\s+|and\s+)?(?:adjust|fix|change|update|make|add|create|implement|move|remove|set|modify|"
    r"refactor)\s+(?:the|it|this|that|them|my|our)\b.*$",
    re.I,
)
_SUBORDINATE = re.compile(r"^(?:if|when|whenever|before|after|while|once|unless|as|since|until)\b", re.I)
# "when writing AL code, follow ..." -> "AL code: follow ..."; "in terms of todo, ..." -> "todo: ..."
_TOPIC = re.compile(
    r"^(?:(?:when|while) (?:writing|editing|working on|working in|coding in)|in terms of|regarding|as for|for(?! example| instance| now| that| this| the moment)) ([^,]{2,30}),\s+",
    re.I,
)
# a link by what it names: github.com/owner/repo/tree/main/docs/x -> owner/repo/x; else its host
_URL = re.compile(r"\bhttps?://([\w.-]+)(/[^\s)>\]\"',]*)?")
_FORGES = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")


def _short_url(m: re.Match[str]) -> str:
    host = m.group(1).removeprefix("www.")
    parts = [p for p in (m.group(2) or "").split("/") if p]
    if host in _FORGES and len(parts) >= 2:
        return "/".join(parts[:2] + parts[-1:]) if len(parts) > 4 else "/".join(parts[:2])
    return host


def clause(sentence: str) -> str:
    """A rule as a short clause: `Please always use f-strings, not format(), because ...` ->
    `always use f-strings, not format()`; no politeness, no preamble, no reason, no scope words."""
    text = " ".join(re.sub(r"\*\*|__|`", "", sentence).split())
    text = _kept_in_mind(text) or text
    text = _URL.sub(_short_url, text) if "://" in text else text
    text = LABELLED.sub("", text) if len(text) > 40 else text
    topic = _TOPIC.match(text)
    label = f"{topic.group(1)}: " if topic is not None else ""
    text = text[topic.end() :] if topic is not None else text
    if not _SUBORDINATE.match(text):
        text = _TASK_AFTER.sub("", _SPLICE.sub("", text))
    for _ in range(3):
        text = _ASKING.sub("", _PREAMBLE.sub("", text))
    short = " ".join(_OPEN_ASIDE.sub("", _ASIDE.sub("", _REASON.sub("", text))).split())
    text = short if len(short) >= 12 else text
    text = _TRAILER.sub("", text).rstrip(" .!,;:。！；，")
    if "，" in text and len(text.encode()) > CLAUSE_CHARS:  # a Chinese sentence: the part that states the rule
        cues = list(_CONVENTION_OTHER.finditer(text))
        if cues:  # from the part with the first cue to the last one that fits
            start = text.rfind("，", 0, cues[0].start()) + 1
            end = text.find("，", cues[0].end())
            end = end if end >= 0 else len(text)
            for cue in cues[1:]:
                after = text.find("，", cue.end())
                after = after if after >= 0 else len(text)
                if after - start > CLAUSE_CHARS // 2:
                    break
                end = max(end, after)
            text = text[start:end]
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    text = label + text  # (a topic keeps its capitals: "Go code: ...")
    if len(text) > CLAUSE_CHARS:
        text = _shortened(text)
    limit = CLAUSE_CHARS // 2 if not text.isascii() and _WIDE.search(text) else CLAUSE_CHARS
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return text
