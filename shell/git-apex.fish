# fish completion for git-apex and `git apex`. Install it in a
# vendor_conf.d directory (install.sh does), so the `git apex` rule is there
# before fish loads git's completions, or load it with:
#   git apex completion fish | source
function __git_apex_complete
    set -l words (commandline -opc)
    set -l start (contains -i -- apex $words; or contains -i -- git-apex $words)
    set -l candidates (git-apex __complete -- $words[(math $start + 1)..-1] (commandline -ct) 2>/dev/null)
    if test (count $candidates) -gt 0
        printf '%s\n' $candidates
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c git-apex -f -a '(__git_apex_complete)'
complete -c git -n '__fish_seen_subcommand_from apex' -f -a '(__git_apex_complete)'
