
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-deltas' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-deltas'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-deltas' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Run an informer on RESOURCE and show every pop of its queue as a live timeline')
            [CompletionResult]::new('index', 'index', [CompletionResultType]::ParameterValue, 'Build the informer cache once and answer an Indexer query')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Run an informer on a cluster and record every server answer to a file')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Replay a recording through the real Reflector and DeltaFIFO, offline')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-deltas;watch' {
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Stop after this long, as Ctrl-C does (summary, exit 0)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed')
            [CompletionResult]::new('--object', '--object', [CompletionResultType]::ParameterName, 'How much of each object jsonl, json, yaml and html carry')
            [CompletionResult]::new('--max-batches', '--max-batches', [CompletionResultType]::ParameterName, 'Exit after N batches (N pushes with `--store undelta`)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`')
            [CompletionResult]::new('--handler-delay', '--handler-delay', [CompletionResultType]::ParameterName, 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue')
            [CompletionResult]::new('--handler', '--handler', [CompletionResultType]::ParameterName, 'Register an event handler, as a controller does (repeatable)')
            [CompletionResult]::new('--controller', '--controller', [CompletionResultType]::ParameterName, 'Register a controller: client-go''s workqueue or kube-runtime''s.')
            [CompletionResult]::new('--informer', '--informer', [CompletionResultType]::ParameterName, 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue''s lock, so the Reflector waits for it)')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'What is shown')
            [CompletionResult]::new('--match', '--match', [CompletionResultType]::ParameterName, 'Only pops of objects whose namespace/name matches GLOB (repeatable)')
            [CompletionResult]::new('--types', '--types', [CompletionResultType]::ParameterName, 'Only pops carrying one of these delta types (`Added,Deleted`)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Field selector (`status.phase=Running`)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate (`system:serviceaccount:NS:NAME`)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable; needs `--as`)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate (needs `--as`)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Name to validate the server''s certificate against (default: the server''s host name)')
            [CompletionResult]::new('--client-go', '--client-go', [CompletionResultType]::ParameterName, 'The client-go version whose informer runs (default: 1.32)')
            [CompletionResult]::new('--resync', '--resync', [CompletionResultType]::ParameterName, 'Resync period (`30s`, `5m`; `0` disables)')
            [CompletionResult]::new('--legacy-sync', '--legacy-sync', [CompletionResultType]::ParameterName, 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)')
            [CompletionResult]::new('--unlock-while-processing', '--unlock-while-processing', [CompletionResultType]::ParameterName, 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more')
            [CompletionResult]::new('--index', '--index', [CompletionResultType]::ParameterName, 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)')
            [CompletionResult]::new('--fifo', '--fifo', [CompletionResultType]::ParameterName, 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)')
            [CompletionResult]::new('--batch-pop', '--batch-pop', [CompletionResultType]::ParameterName, 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`')
            [CompletionResult]::new('--page-size', '--page-size', [CompletionResultType]::ParameterName, 'Objects per page of every list, relists included, as client-go''s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)')
            [CompletionResult]::new('--watch-timeout', '--watch-timeout', [CompletionResultType]::ParameterName, 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)')
            [CompletionResult]::new('--watch-list', '--watch-list', [CompletionResultType]::ParameterName, 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)')
            [CompletionResult]::new('--verify-every', '--verify-every', [CompletionResultType]::ParameterName, 'Every DURATION, list at the resourceVersion the cache has reached (resourceVersionMatch=Exact) and report every key missing, extra or at another resourceVersion in the cache (`0` disables; below 1s means 1s). Modelled on client-go''s data consistency detector, but periodic, and reported instead of panicking. Once the server has compacted that resourceVersion (etcd compacts every 5 minutes), the check lists at "" instead and, if that differs from the cache, waits for the watch to deliver up to the list''s resourceVersion (bookmarks move a quiet resource on) before comparing')
            [CompletionResult]::new('--compare', '--compare', [CompletionResultType]::ParameterName, 'Run several stacks side by side on one stream, and show where they differ')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('--show-secret-data', '--show-secret-data', [CompletionResultType]::ParameterName, 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)')
            [CompletionResult]::new('--since-now', '--since-now', [CompletionResultType]::ParameterName, 'Do not print the initial list''s batches')
            [CompletionResult]::new('--until-synced', '--until-synced', [CompletionResultType]::ParameterName, 'Exit once the cache has synced and the initial batches are printed')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'No header row over the timeline on a terminal, as kubectl''s `--no-headers`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bar, status footer or summary table on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bar, status footer or summary table on stderr')
            [CompletionResult]::new('--tombstones', '--tombstones', [CompletionResultType]::ParameterName, 'Only pops carrying a DeletedFinalStateUnknown tombstone')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate: the HTTPS connection is then insecure')
            [CompletionResult]::new('--consistent-list', '--consistent-list', [CompletionResultType]::ParameterName, 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)')
            [CompletionResult]::new('--no-strip-managed-fields', '--no-strip-managed-fields', [CompletionResultType]::ParameterName, 'Keep managedFields (stripped by default, as many informers do with a transform)')
            [CompletionResult]::new('--metadata-only', '--metadata-only', [CompletionResultType]::ParameterName, 'List and watch only each object''s metadata (PartialObjectMetadata)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-deltas;index' {
            [CompletionResult]::new('--by', '--by', [CompletionResultType]::ParameterName, 'The index to query: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner')
            [CompletionResult]::new('--value', '--value', [CompletionResultType]::ParameterName, 'Only objects indexed under this value (repeatable; `*` for any value: which objects have the label, annotation or field at all); without it, every value with its count')
            [CompletionResult]::new('--replay', '--replay', [CompletionResultType]::ParameterName, 'Build the cache from a recording instead of a cluster (`-` for stdin), as it was at the recording''s end. The cluster''s flags do not apply: the recording says what was listed')
            [CompletionResult]::new('--at', '--at', [CompletionResultType]::ParameterName, 'With `--replay`: the cache as it was at this point of the recording instead of its end, written as `replay --to` takes it: a time (RFC 3339), an offset from its start (`+30s`) or a pop''s number as `replay` shows it (`#12`)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Field selector (`status.phase=Running`)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate (`system:serviceaccount:NS:NAME`)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable; needs `--as`)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate (needs `--as`)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Name to validate the server''s certificate against (default: the server''s host name)')
            [CompletionResult]::new('--client-go', '--client-go', [CompletionResultType]::ParameterName, 'Build the cache as a client-go version''s informer does: its queue, pops and initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop` and `--watch-list` override what it sets (docs/queues.md). Default: 1.32')
            [CompletionResult]::new('--index', '--index', [CompletionResultType]::ParameterName, 'Add another index to the Indexer (repeatable), as `--by` takes: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner')
            [CompletionResult]::new('--fifo', '--fifo', [CompletionResultType]::ParameterName, 'The queue the list goes through into the Indexer: delta, real, atomic or plain (docs/queues.md; default: the `--client-go` version''s). Every queue leaves the same cache')
            [CompletionResult]::new('--batch-pop', '--batch-pop', [CompletionResultType]::ParameterName, 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch')
            [CompletionResult]::new('--page-size', '--page-size', [CompletionResultType]::ParameterName, 'Objects per page of the list (default: 500), as client-go''s WatchListPageSize')
            [CompletionResult]::new('--watch-list', '--watch-list', [CompletionResultType]::ParameterName, 'List through a streaming watch (sendInitialEvents), falling back to a paged list when the server refuses (default: on from `--client-go 1.35`; `--watch-list=false` pages)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('--keys-only', '--keys-only', [CompletionResultType]::ParameterName, 'Print the store keys (`namespace/name`) of the objects under the `--value`s, one per line, instead of an `-o` format')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'Print no header row in tables (`-o table`, `-o wide`), as kubectl''s `--no-headers`')
            [CompletionResult]::new('--fail-empty', '--fail-empty', [CompletionResultType]::ParameterName, 'Exit with code 4 when nothing matches: no object under any `--value`, or, without `--value`, no object with a value at all. Either way, in every format, nothing is written on stdout and one sentence on stderr (a note, exit 0, without this flag)')
            [CompletionResult]::new('--show-secret-data', '--show-secret-data', [CompletionResultType]::ParameterName, 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, indexing Secrets by them is refused)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No notes on stderr (a retry, an empty answer); errors still go there')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No notes on stderr (a retry, an empty answer); errors still go there')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate: the HTTPS connection is then insecure')
            [CompletionResult]::new('--consistent-list', '--consistent-list', [CompletionResultType]::ParameterName, 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)')
            [CompletionResult]::new('--no-strip-managed-fields', '--no-strip-managed-fields', [CompletionResultType]::ParameterName, 'Keep managedFields in `-o json|yaml|jsonl` (stripped by default, as many informers do)')
            [CompletionResult]::new('--metadata-only', '--metadata-only', [CompletionResultType]::ParameterName, 'List only each object''s metadata (PartialObjectMetadata, as client-go''s metadata informers): a fraction of the memory and traffic; a `field:` index outside metadata is refused')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-deltas;record' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The timeline goes to stderr. The file is created once the server first answers, and an existing one is refused unless `--force`')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The timeline goes to stderr. The file is created once the server first answers, and an existing one is refused unless `--force`')
            [CompletionResult]::new('--duration', '--duration', [CompletionResultType]::ParameterName, 'Stop after this long (default: until Ctrl-C)')
            [CompletionResult]::new('--handler-delay', '--handler-delay', [CompletionResultType]::ParameterName, 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue')
            [CompletionResult]::new('--handler', '--handler', [CompletionResultType]::ParameterName, 'Register an event handler, as a controller does (repeatable)')
            [CompletionResult]::new('--controller', '--controller', [CompletionResultType]::ParameterName, 'Register a controller: client-go''s workqueue or kube-runtime''s.')
            [CompletionResult]::new('--informer', '--informer', [CompletionResultType]::ParameterName, 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue''s lock, so the Reflector waits for it)')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'What is shown')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'Directory of the discovery cache, as kubectl''s (default: $KUBECACHEDIR, then ~/.kube/cache). What the server serves is kept there for 6 hours, per server')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s namespace, then `default`)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Label selector (`app=web,tier!=db`)')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Field selector (`status.phase=Running`)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Timeout of a single request, as kubectl''s `--request-timeout` (`30s`, `1m`, or a number of seconds; `0` = none)')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate (`system:serviceaccount:NS:NAME`)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate (repeatable; needs `--as`)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate (needs `--as`)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Name to validate the server''s certificate against (default: the server''s host name)')
            [CompletionResult]::new('--client-go', '--client-go', [CompletionResultType]::ParameterName, 'The client-go version whose informer runs (default: 1.32)')
            [CompletionResult]::new('--resync', '--resync', [CompletionResultType]::ParameterName, 'Resync period (`30s`, `5m`; `0` disables)')
            [CompletionResult]::new('--legacy-sync', '--legacy-sync', [CompletionResultType]::ParameterName, 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)')
            [CompletionResult]::new('--unlock-while-processing', '--unlock-while-processing', [CompletionResultType]::ParameterName, 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more')
            [CompletionResult]::new('--index', '--index', [CompletionResultType]::ParameterName, 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)')
            [CompletionResult]::new('--fifo', '--fifo', [CompletionResultType]::ParameterName, 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)')
            [CompletionResult]::new('--batch-pop', '--batch-pop', [CompletionResultType]::ParameterName, 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`')
            [CompletionResult]::new('--page-size', '--page-size', [CompletionResultType]::ParameterName, 'Objects per page of every list, relists included, as client-go''s WatchListPageSize (default: pages of 500, except relists at a resourceVersion, which ask for everything at once so that the watch cache answers with current data)')
            [CompletionResult]::new('--watch-timeout', '--watch-timeout', [CompletionResultType]::ParameterName, 'Watch timeout sent to the server (default: random in [5m, 10m), as client-go)')
            [CompletionResult]::new('--watch-list', '--watch-list', [CompletionResultType]::ParameterName, 'Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when the server refuses (default: on from `--client-go 1.35`, as WatchListClient; `--watch-list=false` lists in pages whatever the version)')
            [CompletionResult]::new('--verify-every', '--verify-every', [CompletionResultType]::ParameterName, 'Every DURATION, list at the resourceVersion the cache has reached (resourceVersionMatch=Exact) and report every key missing, extra or at another resourceVersion in the cache (`0` disables; below 1s means 1s). Modelled on client-go''s data consistency detector, but periodic, and reported instead of panicking. Once the server has compacted that resourceVersion (etcd compacts every 5 minutes), the check lists at "" instead and, if that differs from the cache, waits for the watch to deliver up to the list''s resourceVersion (bookmarks move a quiet resource on) before comparing')
            [CompletionResult]::new('--compare', '--compare', [CompletionResultType]::ParameterName, 'Refused with a sentence: a recording is the server''s answers, whatever reads them')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Overwrite the `-f` file if it exists')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Do not render the timeline on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Do not render the timeline on stderr')
            [CompletionResult]::new('--show-secret-data', '--show-secret-data', [CompletionResultType]::ParameterName, 'Keep Secret values (data, stringData and the kubectl last-applied-configuration annotation) in the recording (redacted by default)')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate: the HTTPS connection is then insecure')
            [CompletionResult]::new('--consistent-list', '--consistent-list', [CompletionResultType]::ParameterName, 'List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache)')
            [CompletionResult]::new('--no-strip-managed-fields', '--no-strip-managed-fields', [CompletionResultType]::ParameterName, 'Keep managedFields (stripped by default, as many informers do with a transform)')
            [CompletionResult]::new('--metadata-only', '--metadata-only', [CompletionResultType]::ParameterName, 'List and watch only each object''s metadata (PartialObjectMetadata)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-deltas;replay' {
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Replay in real time divided by X (`--speed 1` is real time) instead of instantly, with the consumer popping concurrently as live, on a clock running X times real time (handler delays and a controller''s reconciles and retries then count in recorded time)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C included): an existing FILE (through a symlink, the file it names) is replaced by the complete page, and left as it was by a session that fails. It cannot be the recording replayed')
            [CompletionResult]::new('--object', '--object', [CompletionResultType]::ParameterName, 'How much of each object jsonl, json, yaml and html carry')
            [CompletionResult]::new('--max-batches', '--max-batches', [CompletionResultType]::ParameterName, 'Exit after N batches (N pushes with `--store undelta`)')
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch matching any query is shown). SPEC is an index spec as for `--index`')
            [CompletionResult]::new('--handler-delay', '--handler-delay', [CompletionResultType]::ParameterName, 'How long the default event handler takes per notification (without --handler). In a shared informer its buffer grows and the queue does not; with --informer plain the pop waits for it, and deltas coalesce in the queue')
            [CompletionResult]::new('--handler', '--handler', [CompletionResultType]::ParameterName, 'Register an event handler, as a controller does (repeatable)')
            [CompletionResult]::new('--controller', '--controller', [CompletionResultType]::ParameterName, 'Register a controller: client-go''s workqueue or kube-runtime''s.')
            [CompletionResult]::new('--informer', '--informer', [CompletionResultType]::ParameterName, 'How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the pop under the queue''s lock, so the Reflector waits for it)')
            [CompletionResult]::new('--view', '--view', [CompletionResultType]::ParameterName, 'What is shown')
            [CompletionResult]::new('--match', '--match', [CompletionResultType]::ParameterName, 'Only pops of objects whose namespace/name matches GLOB (repeatable)')
            [CompletionResult]::new('--types', '--types', [CompletionResultType]::ParameterName, 'Only pops carrying one of these delta types (`Added,Deleted`)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only pops of objects matching this label selector, read as the API server reads `-l` (`app=web,tier!=db`, `env in (prod,staging)`, `!canary`) but applied here, to the recording')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only pops of objects matching this label selector, read as the API server reads `-l` (`app=web,tier!=db`, `env in (prod,staging)`, `!canary`) but applied here, to the recording')
            [CompletionResult]::new('--field-selector', '--field-selector', [CompletionResultType]::ParameterName, 'Only pops of objects matching this field selector (`status.phase=Running`, `spec.nodeName!=node-a`; =, == and !=), applied here to any dotted path; a missing field reads as empty')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Show from this point of the recording: a time (RFC 3339, `2024-05-01T17:31:40Z`), an offset from its start (`+30s`) or a pop''s number (`#12`)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Show up to this point (included), written as for `--from`; a `--from` after it is refused')
            [CompletionResult]::new('--client-go', '--client-go', [CompletionResultType]::ParameterName, 'The client-go version whose informer runs (default: 1.32)')
            [CompletionResult]::new('--resync', '--resync', [CompletionResultType]::ParameterName, 'Resync period (`30s`, `5m`; `0` disables)')
            [CompletionResult]::new('--legacy-sync', '--legacy-sync', [CompletionResultType]::ParameterName, 'Replace emits Sync deltas instead of Replaced, as before client-go 1.18 (`--legacy-sync=false`: Replaced, whatever `--client-go` says)')
            [CompletionResult]::new('--unlock-while-processing', '--unlock-while-processing', [CompletionResultType]::ParameterName, 'With `--fifo atomic`: release the queue''s lock while a pop is processed, unless 2000 deltas wait, as client-go 1.36''s UnlockWhileProcessingFIFO (default: on from `--client-go 1.36`); a plain informer''s slow handler then lets the queue grow and the next batch pop take more')
            [CompletionResult]::new('--index', '--index', [CompletionResultType]::ParameterName, 'Add an index to the Indexer (repeatable; `field:spec.nodeName`)')
            [CompletionResult]::new('--fifo', '--fifo', [CompletionResultType]::ParameterName, 'The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33''s RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md). Default: the `--client-go` version''s (delta for 1.32)')
            [CompletionResult]::new('--batch-pop', '--batch-pop', [CompletionResultType]::ParameterName, 'With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go''s PopBatch (default: 1000 from `--client-go 1.35` on, as client-go''s batch size; else 1)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an UndeltaStore, which pushes its whole content after every change, as the kubelet''s pod source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`, `--handler-delay`, `--query` and `--resync`')
            [CompletionResult]::new('--compare', '--compare', [CompletionResultType]::ParameterName, 'Run several stacks side by side on one stream, and show where they differ')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('--show-secret-data', '--show-secret-data', [CompletionResultType]::ParameterName, 'Show Secret values: data, stringData and the kubectl last-applied-configuration annotation (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets)')
            [CompletionResult]::new('--since-now', '--since-now', [CompletionResultType]::ParameterName, 'Do not print the initial list''s batches')
            [CompletionResult]::new('--until-synced', '--until-synced', [CompletionResultType]::ParameterName, 'Exit once the cache has synced and the initial batches are printed')
            [CompletionResult]::new('--no-headers', '--no-headers', [CompletionResultType]::ParameterName, 'No header row over the timeline on a terminal, as kubectl''s `--no-headers`')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bar, status footer or summary table on stderr')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bar, status footer or summary table on stderr')
            [CompletionResult]::new('--tombstones', '--tombstones', [CompletionResultType]::ParameterName, 'Only pops carrying a DeletedFinalStateUnknown tombstone')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-deltas;completion' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to use colours')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Log to stderr (-v, -vv, -vvv); -v also adds timeline rows')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-deltas;help' {
            [CompletionResult]::new('watch', 'watch', [CompletionResultType]::ParameterValue, 'Run an informer on RESOURCE and show every pop of its queue as a live timeline')
            [CompletionResult]::new('index', 'index', [CompletionResultType]::ParameterValue, 'Build the informer cache once and answer an Indexer query')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Run an informer on a cluster and record every server answer to a file')
            [CompletionResult]::new('replay', 'replay', [CompletionResultType]::ParameterValue, 'Replay a recording through the real Reflector and DeltaFIFO, offline')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-deltas;help;watch' {
            break
        }
        'kubectl-deltas;help;index' {
            break
        }
        'kubectl-deltas;help;record' {
            break
        }
        'kubectl-deltas;help;replay' {
            break
        }
        'kubectl-deltas;help;completion' {
            break
        }
        'kubectl-deltas;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
