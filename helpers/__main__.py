from helpers.cli import exit_now, main

exit_now(main())
