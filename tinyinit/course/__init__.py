"""The course around the code: the module card's tests, the checker that runs them on a
student's file from a sandboxed process, the exercises and quizzes, and a class's grading.

    catalog            the module card's eleven tests, as functions
    checker            `check_init`: the card's tests on a student's file, judged from outside it
    student_process    the student's side of the checker: imports my_init.py and answers calls
    wire_format        the messages between the checker and the student's process, as JSON lines
    sandbox            the wall around the student's process (bubblewrap)
    student_functions  the student's functions as the notebooks run them, tinyinit's where not
    exercises          the checks of the exercises whose check cell would give their answer away
    quiz               predict, then run; checks that give a student a hint
    pitfalls           which pitfall an initializer fell into, read from its behaviour
    inventory          the concept inventory: thirteen items, each wrong option a misconception
    handin             `python -m tinyinit submit`: my_init.py and its report in one zip
    grading            `python -m tinyinit grade`: a whole class checked, graded and reported
"""
