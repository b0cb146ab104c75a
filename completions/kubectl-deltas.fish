# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_deltas_global_optspecs
    string join \n v/verbose color= h/help V/version
end

function __fish_kubectl_deltas_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_deltas_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_deltas_using_subcommand
    set -l cmd (__fish_kubectl_deltas_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "watch" -d 'Run an informer on RESOURCE and show every pop of its queue as a live timeline'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "index" -d 'Build the informer cache once and answer an Indexer query'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "record" -d 'Run an informer on a cluster and record every server answer to a file'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "replay" -d 'Replay a recording through the real Reflector and DeltaFIFO, offline'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l duration -d 'Stop after this long, as Ctrl-C does (summary, exit 0)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s o -l output -d 'Output format' -r -f -a "timeline\t'One row per popped batch, for people'
wide\t'The timeline with uid, generation, owner and every changed path'
jsonl\t'One JSON object per line, for scripts (docs/jsonl.md)'
json\t'Each batch as a pretty JSON document'
yaml\t'Each batch as a YAML document'
html\t'One self-contained HTML page, written when the session ends (to stdout, or -f FILE): the Reflector, every key\'s pops, the queue and each handler on a time axis, the summary below'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s f -l file -d 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l object -d 'How much of each object jsonl, json, yaml and html carry' -r -f -a "full\t'The whole object'
meta\t'apiVersion, kind and metadata, without managedFields'
none\t'No object at all'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l max-batches -d 'Exit after N batches (N pushes with `--store undelta`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l query -d 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l handler-delay -d 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l handler -d 'Register an event handler, as a controller does (repeatable)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l controller -d 'Register a controller: client-go\'s workqueue or kube-runtime\'s.' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l informer -d 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue\'s lock, so the Reflector waits for it)' -r -f -a "shared\t'client-go\'s SharedIndexInformer: handlers called from their own threads, through unbounded buffers'
plain\t'client-go\'s NewInformer: one handler called inside the queue\'s pop'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l view -d 'What is shown' -r -f -a "pops\t'The queue\'s pops (batches), as today\'s timeline'
handlers\t'What each handler received: one row per notification'
both\t'Pops, each followed by what the handlers received of it, and the controllers\' reconciles'
reconciles\t'Only what the controllers\' workers did (`--controller`): one row per reconcile'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l match -d 'Only pops of objects whose namespace/name matches GLOB (repeatable)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l types -d 'Only pops carrying one of these delta types (`Added,Deleted`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l cache-dir -d 'Directory of the discovery cache, as kubectl\'s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s n -l namespace -d 'The namespace (default: the context\'s namespace, then `default`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s l -l selector -d 'Label selector (`app=web,tier!=db`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l field-selector -d 'Field selector (`status.phase=Running`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l request-timeout -d 'Timeout of a single request, as kubectl\'s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l as -d 'Username to impersonate (`system:serviceaccount:NS:NAME`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l as-group -d 'Group to impersonate (repeatable; needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l as-uid -d 'UID to impersonate (needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l client-certificate -d 'Path to a client certificate file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l client-key -d 'Path to a client key file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l tls-server-name -d 'Name to validate the server\'s certificate against (default: the server\'s host name)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l client-go -d 'The client-go version whose informer runs (default: 1.32)' -r -f -a "1.17\t''
1.18\t''
1.19\t''
1.20\t''
1.21\t''
1.22\t''
1.23\t''
1.24\t''
1.25\t''
1.26\t''
1.27\t''
1.28\t''
1.29\t''
1.30\t''
1.31\t''
1.32\t''
1.33\t''
1.34\t''
1.35\t''
1.36\t''
latest\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l resync -d 'Resync period (`30s`, `5m`; `0` disables)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l legacy-sync -d 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l unlock-while-processing -d 'With `--fifo atomic`: release the queue\'s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36\'s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer\'s slow handler then lets the queue grow and the next batch pop take more' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l index -d 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l fifo -d 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33\'s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version\'s (delta for 1.32)' -r -f -a "delta\t'client-go\'s DeltaFIFO: deltas merged per key, deletions deduplicated (before 1.33)'
real\t'client-go\'s RealFIFO: every delta in arrival order (InOrderInformers, 1.33+)'
atomic\t'RealFIFO with whole-list ReplacedAll/SyncAll and Bookmark deltas (AtomicFIFO gate, 1.36)'
plain\t'client-go\'s plain FIFO: the latest object per key, no delta types; deletions never popped'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l batch-pop -d 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go\'s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go\'s batch size; else 1)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l store -d 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet\'s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`' -r -f -a "informer\t'An informer: the `--fifo` queue, popped into an Indexer; one row per popped batch'
undelta\t'client-go\'s UndeltaStore (the kubelet\'s pod source): one row per push of the whole list'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l page-size -d 'Objects per page of every list, relists included, as client-go\'s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l watch-timeout -d 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l watch-list -d 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l verify-every -d 'Every DURATION, list at the resourceVersion the cache has reached (resourceVersionMatch=Exact) and report every key missing, extra or at another resourceVersion in the cache (`0` disables; below 1s means 1s). Modelled on client-go\'s data consistency detector, but periodic, and reported instead of panicking. Once the server has compacted that resourceVersion (etcd compacts every 5 minutes), the check lists at "" instead and, if that differs from the cache, waits for the watch to deliver up to the list\'s resourceVersion (bookmarks move a quiet resource on) before comparing' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l compare -d 'Run several stacks side by side on one stream, and show where they differ' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l show-secret-data -d 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l since-now -d 'Do not print the initial list\'s batches'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l until-synced -d 'Exit once the cache has synced and the initial batches are printed'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l no-headers -d 'No header row over the timeline on a terminal, as kubectl\'s `--no-headers`'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s q -l quiet -d 'No progress bar, status footer or summary table on stderr'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l tombstones -d 'Only pops carrying a DeletedFinalStateUnknown tombstone'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s A -l all-namespaces -d 'Every namespace'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate: the HTTPS connection is then insecure'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l consistent-list -d 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l no-strip-managed-fields -d 'Keep managedFields (stripped by default, as many informers do with a transform)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -l metadata-only -d 'List and watch only each object\'s metadata (PartialObjectMetadata)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l by -d 'The index to query: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l value -d 'Only objects indexed under this value (repeatable; `*` for any value: which objects have the label, annotation or field at all); without it, every value with its count' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l replay -d 'Build the cache from a recording instead of a cluster (`-` for stdin), as it was at the recording\'s end. The cluster\'s flags do not apply: the recording says what was listed' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l at -d 'With `--replay`: the cache as it was at this point of the recording instead of its end, written as `replay --to` takes it: a time (RFC 3339), an offset from its start (`+30s`) or a pop\'s number as `replay` shows it (`#12`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s o -l output -d 'Output format' -r -f -a "table\t'A table: value, count and the first keys that fit the terminal\'s width ($COLUMNS when set; 80 columns when piped), then how many more (`-o wide`, `json` or `jsonl` list every key); with `--value`, one row per object'
wide\t'The table with every key (wrapped to the terminal\'s width, one line per value when piped); with `--value`, uid and owners too'
json\t'One JSON document (the objects as a kubectl List with `--value`)'
yaml\t'One YAML document (the objects as a kubectl List with `--value`)'
jsonl\t'One JSON object per line: a value with its count and keys, or an object'
name\t'`resource/name` per object, like kubectl (`pod/web-1`, `deployment.apps/web`); without `--value`, each indexed value'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l cache-dir -d 'Directory of the discovery cache, as kubectl\'s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s n -l namespace -d 'The namespace (default: the context\'s namespace, then `default`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s l -l selector -d 'Label selector (`app=web,tier!=db`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l field-selector -d 'Field selector (`status.phase=Running`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l request-timeout -d 'Timeout of a single request, as kubectl\'s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l as -d 'Username to impersonate (`system:serviceaccount:NS:NAME`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l as-group -d 'Group to impersonate (repeatable; needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l as-uid -d 'UID to impersonate (needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l client-certificate -d 'Path to a client certificate file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l client-key -d 'Path to a client key file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l tls-server-name -d 'Name to validate the server\'s certificate against (default: the server\'s host name)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l client-go -d 'Build the cache as a client-go version\'s informer does: its queue, pops and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32' -r -f -a "1.17\t''
1.18\t''
1.19\t''
1.20\t''
1.21\t''
1.22\t''
1.23\t''
1.24\t''
1.25\t''
1.26\t''
1.27\t''
1.28\t''
1.29\t''
1.30\t''
1.31\t''
1.32\t''
1.33\t''
1.34\t''
1.35\t''
1.36\t''
latest\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l index -d 'Add another index to the Indexer (repeatable), as `--by` takes: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l fifo -d 'The queue the list goes through into the Indexer: delta, real, atomic or plain (docs/queues.md; default: the `--client-go` version\'s). Every queue leaves the same cache' -r -f -a "delta\t'client-go\'s DeltaFIFO: deltas merged per key, deletions deduplicated (before 1.33)'
real\t'client-go\'s RealFIFO: every delta in arrival order (InOrderInformers, 1.33+)'
atomic\t'RealFIFO with whole-list ReplacedAll/SyncAll and Bookmark deltas (AtomicFIFO gate, 1.36)'
plain\t'client-go\'s plain FIFO: the latest object per key, no delta types; deletions never popped'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l batch-pop -d 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go\'s PopBatch' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l page-size -d 'Objects per page of the list (default: 500), as client-go\'s WatchListPageSize' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l watch-list -d 'List through a streaming watch (sendInitialEvents), falling back to a paged list when the server refuses (default: on from `--client-go 1.35`; `--watch-list=false` pages)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l keys-only -d 'Print the store keys (`namespace/name`) of the objects under the `--value`s, one per line, instead of an `-o` format'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l no-headers -d 'Print no header row in tables (`-o table`, `-o wide`), as kubectl\'s `--no-headers`'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l fail-empty -d 'Exit with code 4 when nothing matches: no object under any `--value`, or, without `--value`, no object with a value at all. Either way, in every format, nothing is written on stdout and one sentence on stderr (a note, exit 0, without this flag)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l show-secret-data -d 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, indexing Secrets by them is refused)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s q -l quiet -d 'No notes on stderr (a retry, an empty answer); errors still go there'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s A -l all-namespaces -d 'Every namespace'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate: the HTTPS connection is then insecure'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l consistent-list -d 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l no-strip-managed-fields -d 'Keep managedFields in `-o json|yaml|jsonl` (stripped by default, as many informers do)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -l metadata-only -d 'List only each object\'s metadata (PartialObjectMetadata, as client-go\'s metadata informers): a fraction of the memory and traffic; a `field:` index outside metadata is refused'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s f -l file -d 'Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The timeline goes to stderr. The file is created once the server first answers, and an existing one is refused unless `--force`' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l duration -d 'Stop after this long (default: until Ctrl-C)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l handler-delay -d 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l handler -d 'Register an event handler, as a controller does (repeatable)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l controller -d 'Register a controller: client-go\'s workqueue or kube-runtime\'s.' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l informer -d 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue\'s lock, so the Reflector waits for it)' -r -f -a "shared\t'client-go\'s SharedIndexInformer: handlers called from their own threads, through unbounded buffers'
plain\t'client-go\'s NewInformer: one handler called inside the queue\'s pop'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l view -d 'What is shown' -r -f -a "pops\t'The queue\'s pops (batches), as today\'s timeline'
handlers\t'What each handler received: one row per notification'
both\t'Pops, each followed by what the handlers received of it, and the controllers\' reconciles'
reconciles\t'Only what the controllers\' workers did (`--controller`): one row per reconcile'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l kubeconfig -d 'Path to the kubeconfig file' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l cache-dir -d 'Directory of the discovery cache, as kubectl\'s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s n -l namespace -d 'The namespace (default: the context\'s namespace, then `default`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s l -l selector -d 'Label selector (`app=web,tier!=db`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l field-selector -d 'Field selector (`status.phase=Running`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l request-timeout -d 'Timeout of a single request, as kubectl\'s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l as -d 'Username to impersonate (`system:serviceaccount:NS:NAME`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l as-group -d 'Group to impersonate (repeatable; needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l as-uid -d 'UID to impersonate (needs `--as`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l client-certificate -d 'Path to a client certificate file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l client-key -d 'Path to a client key file for TLS' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l tls-server-name -d 'Name to validate the server\'s certificate against (default: the server\'s host name)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l client-go -d 'The client-go version whose informer runs (default: 1.32)' -r -f -a "1.17\t''
1.18\t''
1.19\t''
1.20\t''
1.21\t''
1.22\t''
1.23\t''
1.24\t''
1.25\t''
1.26\t''
1.27\t''
1.28\t''
1.29\t''
1.30\t''
1.31\t''
1.32\t''
1.33\t''
1.34\t''
1.35\t''
1.36\t''
latest\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l resync -d 'Resync period (`30s`, `5m`; `0` disables)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l legacy-sync -d 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l unlock-while-processing -d 'With `--fifo atomic`: release the queue\'s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36\'s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer\'s slow handler then lets the queue grow and the next batch pop take more' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l index -d 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l fifo -d 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33\'s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version\'s (delta for 1.32)' -r -f -a "delta\t'client-go\'s DeltaFIFO: deltas merged per key, deletions deduplicated (before 1.33)'
real\t'client-go\'s RealFIFO: every delta in arrival order (InOrderInformers, 1.33+)'
atomic\t'RealFIFO with whole-list ReplacedAll/SyncAll and Bookmark deltas (AtomicFIFO gate, 1.36)'
plain\t'client-go\'s plain FIFO: the latest object per key, no delta types; deletions never popped'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l batch-pop -d 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go\'s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go\'s batch size; else 1)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l store -d 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet\'s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`' -r -f -a "informer\t'An informer: the `--fifo` queue, popped into an Indexer; one row per popped batch'
undelta\t'client-go\'s UndeltaStore (the kubelet\'s pod source): one row per push of the whole list'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l page-size -d 'Objects per page of every list, relists included, as client-go\'s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l watch-timeout -d 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l watch-list -d 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l verify-every -d 'Every DURATION, list at the resourceVersion the cache has reached (resourceVersionMatch=Exact) and report every key missing, extra or at another resourceVersion in the cache (`0` disables; below 1s means 1s). Modelled on client-go\'s data consistency detector, but periodic, and reported instead of panicking. Once the server has compacted that resourceVersion (etcd compacts every 5 minutes), the check lists at "" instead and, if that differs from the cache, waits for the watch to deliver up to the list\'s resourceVersion (bookmarks move a quiet resource on) before comparing' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l compare -d 'Refused with a sentence: a recording is the server\'s answers, whatever reads them' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l force -d 'Overwrite the `-f` file if it exists'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s q -l quiet -d 'Do not render the timeline on stderr'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l show-secret-data -d 'Keep Secret values (data, stringData and the kubectl last-applied-configuration annotation) in the recording (redacted by default)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s A -l all-namespaces -d 'Every namespace'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate: the HTTPS connection is then insecure'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l consistent-list -d 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l no-strip-managed-fields -d 'Keep managedFields (stripped by default, as many informers do with a transform)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -l metadata-only -d 'List and watch only each object\'s metadata (PartialObjectMetadata)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand record" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l speed -d 'Replay in real time divided by X (`--speed 1` is real time) instead of instantly, with the consumer popping concurrently as live, on a clock running X times real time (handler delays and a controller\'s reconciles and retries then count in recorded time)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s o -l output -d 'Output format' -r -f -a "timeline\t'One row per popped batch, for people'
wide\t'The timeline with uid, generation, owner and every changed path'
jsonl\t'One JSON object per line, for scripts (docs/jsonl.md)'
json\t'Each batch as a pretty JSON document'
yaml\t'Each batch as a YAML document'
html\t'One self-contained HTML page, written when the session ends (to stdout, or -f FILE): the Reflector, every key\'s pops, the queue and each handler on a time axis, the summary below'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s f -l file -d 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed' -r -F
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l object -d 'How much of each object jsonl, json, yaml and html carry' -r -f -a "full\t'The whole object'
meta\t'apiVersion, kind and metadata, without managedFields'
none\t'No object at all'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l max-batches -d 'Exit after N batches (N pushes with `--store undelta`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l query -d 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l handler-delay -d 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l handler -d 'Register an event handler, as a controller does (repeatable)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l controller -d 'Register a controller: client-go\'s workqueue or kube-runtime\'s.' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l informer -d 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue\'s lock, so the Reflector waits for it)' -r -f -a "shared\t'client-go\'s SharedIndexInformer: handlers called from their own threads, through unbounded buffers'
plain\t'client-go\'s NewInformer: one handler called inside the queue\'s pop'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l view -d 'What is shown' -r -f -a "pops\t'The queue\'s pops (batches), as today\'s timeline'
handlers\t'What each handler received: one row per notification'
both\t'Pops, each followed by what the handlers received of it, and the controllers\' reconciles'
reconciles\t'Only what the controllers\' workers did (`--controller`): one row per reconcile'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l match -d 'Only pops of objects whose namespace/name matches GLOB (repeatable)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l types -d 'Only pops carrying one of these delta types (`Added,Deleted`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s l -l selector -d 'Only pops of objects matching this label selector, read as the API server reads `-l` (`app=web,tier!=db`, `env in (prod,staging)`, `!canary`) but applied here, to the recording' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l field-selector -d 'Only pops of objects matching this field selector (`status.phase=Running`, `spec.nodeName!=node-a`; =, == and !=), applied here to any dotted path; a missing field reads as empty' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l from -d 'Show from this point of the recording: a time (RFC 3339, `2024-05-01T17:31:40Z`), an offset from its start (`+30s`) or a pop\'s number (`#12`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l to -d 'Show up to this point (included), written as for `--from`; a `--from` after it is refused' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l client-go -d 'The client-go version whose informer runs (default: 1.32)' -r -f -a "1.17\t''
1.18\t''
1.19\t''
1.20\t''
1.21\t''
1.22\t''
1.23\t''
1.24\t''
1.25\t''
1.26\t''
1.27\t''
1.28\t''
1.29\t''
1.30\t''
1.31\t''
1.32\t''
1.33\t''
1.34\t''
1.35\t''
1.36\t''
latest\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l resync -d 'Resync period (`30s`, `5m`; `0` disables)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l legacy-sync -d 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l unlock-while-processing -d 'With `--fifo atomic`: release the queue\'s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36\'s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer\'s slow handler then lets the queue grow and the next batch pop take more' -r -f -a "true\t''
false\t''"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l index -d 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l fifo -d 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33\'s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version\'s (delta for 1.32)' -r -f -a "delta\t'client-go\'s DeltaFIFO: deltas merged per key, deletions deduplicated (before 1.33)'
real\t'client-go\'s RealFIFO: every delta in arrival order (InOrderInformers, 1.33+)'
atomic\t'RealFIFO with whole-list ReplacedAll/SyncAll and Bookmark deltas (AtomicFIFO gate, 1.36)'
plain\t'client-go\'s plain FIFO: the latest object per key, no delta types; deletions never popped'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l batch-pop -d 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go\'s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go\'s batch size; else 1)' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l store -d 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet\'s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`' -r -f -a "informer\t'An informer: the `--fifo` queue, popped into an Indexer; one row per popped batch'
undelta\t'client-go\'s UndeltaStore (the kubelet\'s pod source): one row per push of the whole list'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l compare -d 'Run several stacks side by side on one stream, and show where they differ' -r
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l show-secret-data -d 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l since-now -d 'Do not print the initial list\'s batches'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l until-synced -d 'Exit once the cache has synced and the initial batches are printed'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l no-headers -d 'No header row over the timeline on a terminal, as kubectl\'s `--no-headers`'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s q -l quiet -d 'No progress bar, status footer or summary table on stderr'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -l tombstones -d 'Only pops carrying a DeletedFinalStateUnknown tombstone'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand replay" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand completion" -l color -d 'When to use colours' -r -f -a "auto\t'On a terminal, unless NO_COLOR is set'
always\t'Always'
never\t'Never'"
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand completion" -s v -l verbose -d 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "watch" -d 'Run an informer on RESOURCE and show every pop of its queue as a live timeline'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "index" -d 'Build the informer cache once and answer an Indexer query'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "record" -d 'Run an informer on a cluster and record every server answer to a file'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "replay" -d 'Replay a recording through the real Reflector and DeltaFIFO, offline'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "completion" -d 'Print a shell completion script'
complete -c kubectl-deltas -n "__fish_kubectl_deltas_using_subcommand help; and not __fish_seen_subcommand_from watch index record replay completion help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
