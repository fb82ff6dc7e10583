# git-apex shell integration (fish): lets "git apex cd <identity>" and
# "git apex start --cd ..." change this shell's directory. Enable it with
#   git apex shell-init fish | source    # in ~/.config/fish/config.fish
function git --wraps git
    if test (count $argv) -ge 2; and test "$argv[1]" = apex
        if test "$argv[2]" = cd
            set -l dir (command git apex path $argv[3..-1]); or return
            builtin cd -- $dir
            return
        else if test "$argv[2]" = start; and contains -- --cd $argv
            set -l dir (command git $argv); or return
            builtin cd -- $dir
            return
        end
    end
    command git $argv
end
