"""git's option tables, one per subcommand the rules understand (see shell_tables for the
notation). Generated from git 2.39's own `git SUB -h` and `--git-completion-helper-all`
listings (every long option the subcommand accepts, hidden ones included, so that unique
prefixes resolve as git resolves them), with `!` added by hand on each option whose value is
a command git runs. The revision and diff options of log/show/diff are not abbreviated by
git (`--onel` is an error), so their table is exact-match only and lists the common ones.

A subcommand missing here still runs, but only without options: an option the rules cannot
read asks.
"""

from __future__ import annotations

from .shell_tables import Table, table

_REV_DIFF = (
    "p|patch u| s|no-patch z| n|max-count= c| m| t| r| R| a|text b|ignore-space-change "
    "w|ignore-all-space i|regexp-ignore-case E|extended-regexp F|fixed-strings P|perl-regexp "
    "g|walk-reflogs S|= G|= L|= U|unified= O|= M|find-renames? C|find-copies? B|break-rewrites? "
    "l|= D|irreversible-delete W|function-context "
    "oneline graph decorate? no-decorate stat? shortstat numstat name-only name-status "
    "patch-with-stat patch-with-raw raw summary check compact-summary dirstat? cumulative "
    "author= committer= grep= invert-grep all-match since= until= after= before= all "
    "branches? tags? remotes? glob= exclude= follow reverse no-merges merges first-parent "
    "pretty? format= abbrev-commit no-abbrev-commit abbrev? no-abbrev relative-date date= "
    "color? no-color full-diff skip= topo-order date-order author-date-order left-right "
    "cherry-pick cherry-mark cherry boundary simplify-by-decoration ancestry-path? source "
    "diff-filter= word-diff? word-diff-regex= color-words? color-moved? no-color-moved "
    "ignore-blank-lines ignore-space-at-eol ignore-cr-at-eol histogram patience minimal "
    "diff-algorithm= anchored= relative? no-relative no-renames find-copies-harder cc "
    "combined-all-paths full-index binary show-signature notes? no-notes show-notes? "
    "cached staged merge-base no-index exit-code quiet ita-invisible-in-index "
    "src-prefix= dst-prefix= no-prefix line-prefix= log-size mailmap use-mailmap no-mailmap "
    "decorate-refs= decorate-refs-exclude= clear-decorations encoding= expand-tabs? "
    "no-expand-tabs show-linear-break? full-history dense sparse simplify-merges "
    "show-pulls remerge-diff diff-merges= no-diff-merges no-walk? do-walk single-worktree "
    "ignore-missing bisect stdin max-parents= min-parents= no-min-parents no-max-parents "
    "no-textconv textconv no-ext-diff ignore-submodules? submodule? stat-width= "
    "stat-name-width= stat-count= stat-graph-width= inter-hunk-context= pickaxe-all "
    "pickaxe-regex find-object= numbered-files ws-error-highlight= no-standard-notes "
    "standard-notes unified= function-context raw reflog not indexed-objects "
    "show-origin name-rev line-porcelain output-indicator-new= output-indicator-old= "
    "output-indicator-context= minimal default-prefix skip-to= rotate-to= irreversible-delete "
    "no-color-moved-ws color-moved-ws= ignore-matching-lines= I|ignore-matching-lines= "
    "shortlog-summary"
)

_SPECS: dict[str, str] = {
    "status": (
        "M|find-renames? b|branch s|short u|untracked-files? v|verbose z|null ahead-behind "
        "column? ignore-submodules? ignored? long porcelain? renames show-stash"
    ),
    "add": (
        "A|all N|intent-to-add e|edit f|force i|interactive n|dry-run p|patch u|update "
        "v|verbose chmod= ignore-errors ignore-missing ignore-removal pathspec-file-nul "
        "pathspec-from-file= refresh renormalize sparse warn-embedded-repo"
    ),
    "commit": (
        "C|reuse-message= F|file= S|gpg-sign? a|all c|reedit-message= e|edit i|include "
        "m|message= n|no-verify o|only p|patch q|quiet s|signoff t|template= "
        "u|untracked-files? v|verbose z|null ahead-behind allow-empty allow-empty-message "
        "amend author= branch cleanup= date= dry-run fixup= interactive long "
        "pathspec-file-nul pathspec-from-file= porcelain post-rewrite reset-author short "
        "squash= status trailer= verify"
    ),
    "push": (
        "4|ipv4 6|ipv6 d|delete f|force n|dry-run o|push-option= q|quiet u|set-upstream "
        "v|verbose all atomic exec=! follow-tags force-if-includes force-with-lease mirror "
        "porcelain progress prune receive-pack=! recurse-submodules= repo= signed tags thin "
        "verify"
    ),
    "pull": (
        "4|ipv4 6|ipv6 S|gpg-sign? X|strategy-option= a|append f|force j|jobs? k|keep n| "
        "o|server-option= p|prune q|quiet r|rebase s|strategy=! t|tags v|verbose all "
        "allow-unrelated-histories autostash cleanup= commit deepen= depth= dry-run edit ff "
        "ff-only log? negotiation-tip= progress recurse-submodules? refmap= set-upstream "
        "shallow-exclude= shallow-since= show-forced-updates signoff squash stat summary "
        "unshallow update-shallow upload-pack=! verify verify-signatures"
    ),
    "fetch": (
        "4|ipv4 6|ipv6 P|prune-tags a|append f|force j|jobs= k|keep m|multiple n| "
        "o|server-option= p|prune q|quiet t|tags u|update-head-ok v|verbose all atomic "
        "auto-gc auto-maintenance deepen= depth= dry-run filter= negotiate-only "
        "negotiation-tip= prefetch progress recurse-submodules? recurse-submodules-default= "
        "refetch refmap= set-upstream shallow-exclude= shallow-since= show-forced-updates "
        "stdin submodule-prefix= unshallow update-shallow upload-pack=! write-commit-graph "
        "write-fetch-head"
    ),
    "clone": (
        "4|ipv4 6|ipv6 b|branch= c|config=! j|jobs= l|local n|no-checkout o|origin= q|quiet "
        "s|shared u|upload-pack=! v|verbose also-filter-submodules bare bundle-uri= checkout "
        "depth= dissociate filter= hardlinks mirror naked progress recurse-submodules? "
        "recursive? reference= reference-if-able= reject-shallow remote-submodules "
        "separate-git-dir= server-option= shallow-exclude= shallow-since= shallow-submodules "
        "single-branch sparse tags template=!"
    ),
    "rebase": (
        "C|= S|gpg-sign? X|strategy-option= f|force-rebase i|interactive m|merge n|no-stat "
        "q|quiet r|rebase-merges? s|strategy=! v|verbose x|exec=! abort allow-empty-message "
        "apply autosquash autostash committer-date-is-author-date continue edit-todo empty= "
        "ff fork-point ignore-date ignore-whitespace keep-base keep-empty onto= "
        "preserve-merges quit reapply-cherry-picks rerere-autoupdate reschedule-failed-exec "
        "reset-author-date root show-current-patch signoff skip stat update-refs verify "
        "whitespace="
    ),
    "grep": (
        "A|after-context= B|before-context= C|context= E|extended-regexp F|fixed-strings "
        "G|basic-regexp H| I| L|files-without-match O|open-files-in-pager?! P|perl-regexp "
        "W|function-context a|text c|count e|= f|= h| i|ignore-case l|files-with-matches "
        "m|max-count= n|line-number o|only-matching p|show-function q|quiet r|recursive "
        "v|invert-match w|word-regexp z|null all-match and break cached color? column "
        "exclude-standard ext-grep full-name heading index max-depth= name-only not or "
        "recurse-submodules textconv threads= untracked"
    ),
    "difftool": (
        "d|dir-diff g|gui t|tool=! x|extcmd=! y|no-prompt index prompt symlinks tool-help "
        "trust-exit-code"
    ),
    "branch": (
        "C| D| M| a|all c|copy d|delete f|force i|ignore-case l|list m|move q|quiet r|remotes "
        "t|track u|set-upstream-to= v|verbose abbrev? color? column? contains= create-reflog "
        "edit-description format= merged= points-at= recurse-submodules set-upstream "
        "show-current sort= unset-upstream with without"
    ),
    "checkout": (
        "2|ours 3|theirs B|= b|= d|detach f|force l| m|merge p|patch q|quiet t|track "
        "conflict= guess ignore-other-worktrees ignore-skip-worktree-bits orphan= overlay "
        "overwrite-ignore pathspec-file-nul pathspec-from-file= progress recurse-submodules?"
    ),
    "switch": (
        "C|force-create= c|create= d|detach f|force m|merge q|quiet t|track conflict= "
        "discard-changes guess ignore-other-worktrees orphan= overwrite-ignore progress "
        "recurse-submodules?"
    ),
    "restore": (
        "2|ours 3|theirs S|staged W|worktree m|merge p|patch q|quiet s|source= conflict= "
        "ignore-skip-worktree-bits ignore-unmerged overlay pathspec-file-nul "
        "pathspec-from-file= progress recurse-submodules?"
    ),
    "tag": (
        "F|file= a|annotate d|delete e|edit f|force i|ignore-case l|list m|message= n|? "
        "s|sign u|local-user= v|verify cleanup= color? column? contains= create-reflog "
        "format= merged= points-at= sort= with without"
    ),
    "reset": (
        "N|intent-to-add p|patch q|quiet hard keep merge mixed pathspec-file-nul "
        "pathspec-from-file= recurse-submodules? refresh soft"
    ),
    "merge": (
        "F|file= S|gpg-sign? X|strategy-option= e|edit m|message= n| q|quiet s|strategy=! "
        "v|verbose abort allow-unrelated-histories autostash cleanup= commit continue ff "
        "ff-only into-name= log? overwrite-ignore progress quit rerere-autoupdate signoff "
        "squash stat summary verify verify-signatures"
    ),
    "rm": (
        "f|force n|dry-run q|quiet r| cached ignore-unmatch pathspec-file-nul "
        "pathspec-from-file= sparse"
    ),
    "mv": (
        "f|force k| n|dry-run v|verbose sparse"
    ),
    "init": (
        "b|initial-branch= q|quiet bare object-format= separate-git-dir= shared? template=!"
    ),
    "cherry-pick": (
        "S|gpg-sign? X|strategy-option= e|edit m|mainline= n|no-commit s|signoff x| abort "
        "allow-empty allow-empty-message cleanup= commit continue ff keep-redundant-commits "
        "quit rerere-autoupdate skip strategy=!"
    ),
    "revert": (
        "S|gpg-sign? X|strategy-option= e|edit m|mainline= n|no-commit s|signoff abort "
        "cleanup= commit continue quit reference rerere-autoupdate skip strategy=!"
    ),
    "blame": (
        "C|? L|= M|? S|= b| c| e|show-email f|show-name l| n|show-number p|porcelain s| t| w| "
        "abbrev? color-by-age color-lines contents= ignore-rev= ignore-revs-file= incremental "
        "line-porcelain minimal progress root score-debug show-stats"
    ),
    "ls-files": (
        "X|exclude-from= c|cached d|deleted f| i|ignored k|killed m|modified o|others s|stage "
        "t| u|unmerged v| x|exclude= z| abbrev? debug deduplicate directory empty-directory "
        "eol error-unmatch exclude-per-directory= exclude-standard format= full-name "
        "recurse-submodules resolve-undo sparse with-tree="
    ),
    "clean": (
        "X| d| e|exclude= f|force i|interactive n|dry-run q|quiet x|"
    ),
    "describe": (
        "abbrev? all always broken? candidates= contains debug dirty? exact-match exclude= "
        "first-parent long match= tags"
    ),
    "format-patch": (
        "N|no-numbered k|keep-subject n|numbered o|output-directory= p|no-stat q|quiet "
        "s|signoff v|reroll-count= add-header= attach? base= binary cc= "
        "cover-from-description= cover-letter creation-factor= filename-max-length= "
        "force-in-body-from from? ignore-if-in-upstream in-reply-to= inline? interdiff= "
        "numbered-files progress range-diff= rfc signature= signature-file= start-number= "
        "stdout subject-prefix= suffix= thread? to= zero-commit"
    ),
    "am": (
        "3|3way C|= S|gpg-sign? c|scissors i|interactive k|keep m|message-id p|= q|quiet "
        "r|resolved s|signoff u|utf8 abort allow-empty binary committer-date-is-author-date "
        "continue directory= empty= exclude= ignore-date ignore-space-change "
        "ignore-whitespace include= keep-cr keep-non-patch patch-format= quit quoted-cr= "
        "rebasing reject rerere-autoupdate resolvemsg= show-current-patch skip whitespace="
    ),
    "apply": (
        "3|3way C|= N|intent-to-add R|reverse p|= q|quiet v|verbose z| add "
        "allow-binary-replacement allow-empty allow-overlap apply binary build-fake-ancestor= "
        "cached check directory= exclude= ignore-space-change ignore-whitespace "
        "inaccurate-eof include= index numstat recount reject stat summary unidiff-zero "
        "unsafe-paths whitespace="
    ),
    "archive": (
        "N| l|list o|output= v|verbose add-file= add-virtual-file= exec=! format= prefix= "
        "remote=! worktree-attributes"
    ),
    "config": (
        "e|edit f|file= l|list t|type= z|null add blob= bool bool-or-int bool-or-str default= "
        "expiry-date fixed-value get get-all get-color get-colorbool get-regexp get-urlmatch "
        "global includes int local name-only path remove-section rename-section replace-all "
        "show-origin show-scope system unset unset-all worktree"
    ),
    "show-ref": (
        "d|dereference q|quiet s|hash? abbrev? exclude-existing? head heads tags verify"
    ),
    "ls-remote": (
        "h|heads o|server-option= q|quiet t|tags exec=! exit-code get-url refs sort= symref "
        "upload-pack=!"
    ),
    "gc": (
        "q|quiet aggressive auto cruft force keep-largest-pack prune?"
    ),
    "cat-file": (
        "e| p| s| t| z| allow-unknown-type batch? batch-all-objects batch-check? "
        "batch-command? buffer filters follow-symlinks mailmap path= textconv unordered "
        "use-mailmap"
    ),
    "ls-tree": (
        "d| l|long r| t| z| abbrev? format= full-name full-tree name-only name-status "
        "object-only"
    ),
    "merge-base": (
        "a|all fork-point independent is-ancestor octopus"
    ),
    "count-objects": (
        "H|human-readable v|verbose"
    ),
    "fsck": (
        "v|verbose cache connectivity-only dangling full lost-found name-objects progress "
        "reflogs root strict tags unreachable"
    ),
    "stash": "a|all k|keep-index m|message= p|patch q|quiet S|staged u|include-untracked index "
    "no-keep-index pathspec-from-file= pathspec-file-nul only-untracked",
    "remote": "v|verbose",
    "submodule": "q|quiet f|force b|branch= j|jobs= N|no-fetch init recursive remote checkout "
    "rebase merge depth= reference= recommend-shallow single-branch progress cached files "
    "summary-limit= for-status default all name= filter= dissociate",
    "worktree": "b|= B|= d|detach f|force q|quiet v|verbose z| checkout lock reason= track "
    "guess-remote orphan porcelain expire=",
    "shortlog": "c|committer e|email n|numbered s|summary w|? format= group=",
    "mergetool": "t|tool=! g|gui y|no-prompt O|= prompt tool-help",
}
_REV_PARSE = (  # git rev-parse reads its options exactly, without abbreviations
    "q|quiet show-toplevel abbrev-ref? short? verify git-dir absolute-git-dir git-common-dir "
    "is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository "
    "show-prefix show-cdup show-superproject-working-tree symbolic symbolic-full-name sq "
    "not all branches? tags? remotes? glob= exclude= default= prefix= local-env-vars "
    "resolve-git-dir= git-path= since= after= until= before= flags no-flags revs-only "
    "no-revs sq-quote stop-at-non-option keep-dashdash path-format= show-object-format? "
    "disambiguate= shared-index-path"
)
_EXACT = frozenset("log show diff whatchanged".split())


def _build() -> dict[str, Table]:
    tables = {sub: table(spec, negate=True, digits=sub == "grep") for sub, spec in _SPECS.items()}
    for sub in _EXACT:  # `git log --output=f` writes a file: not in the table, so it asks
        tables[sub] = table(_REV_DIFF, prefix=False, digits=True)
    tables["rev-parse"] = table(_REV_PARSE, prefix=False)
    return tables


GIT_TABLES: dict[str, Table] = _build()
